package prometheus

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is where the output listens, and how long it serves after the
// run.
type Config struct {
	// Addr is the HOST:PORT to listen on; port 0 picks a free one.
	Addr string
	// Linger is how long Finish keeps serving, so that a last scrape sees
	// the run's final figures; 0 stops at once.
	Linger time.Duration
}

// ParseConfig reads the value of --out prometheus=HOST:PORT[?linger=5s].
// The host is required, so that the output listens where the user says
// (127.0.0.1 or [::1] to stay on this machine), never on every interface
// by default.
func ParseConfig(value string) (Config, error) {
	addr, query, _ := strings.Cut(value, "?")
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return Config{}, fmt.Errorf("%q: want HOST:PORT, as in --out prometheus=127.0.0.1:9464 (a host is required: 127.0.0.1 or [::1] for this machine only, 0.0.0.0 for every interface)", addr)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return Config{}, fmt.Errorf("%q: the port %q is not a number from 0 to 65535", addr, port)
	}
	cfg := Config{Addr: net.JoinHostPort(host, strconv.FormatUint(n, 10))}
	opts, err := url.ParseQuery(query)
	if err != nil {
		return Config{}, fmt.Errorf("options %q: %w", query, err)
	}
	for k, vs := range opts {
		v := vs[len(vs)-1]
		switch k {
		case "linger":
			d, err := time.ParseDuration(v)
			if err == nil && d < 0 {
				err = errors.New("negative")
			}
			if err != nil {
				return Config{}, fmt.Errorf("linger=%s: want a duration such as 5s: %w", v, err)
			}
			cfg.Linger = d
		default:
			return Config{}, fmt.Errorf("unknown option %q (known: linger)", k)
		}
	}
	return cfg, nil
}

package influxdb

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"

	"github.com/llmrun/llmrun/internal/redact"
)

// TokenEnv is the environment variable the token is read from: never a
// flag or the URL, which land in shell history and result files. InfluxDB
// 1.8's compatibility API takes "user:password".
const TokenEnv = "LLMRUN_INFLUXDB_TOKEN"

// Config is where and how the output writes, parsed from the URL of
// --out influxdb=URL (or trend's --influxdb).
type Config struct {
	// URL is the server's base URL, without query or credentials.
	URL string
	// Org is the organisation (InfluxDB 2.x/3.x; 1.8 ignores it).
	Org string
	// Bucket is the bucket; on 1.8, "database/retention-policy" or
	// "database".
	Bucket string
	// Database and RetentionPolicy, from the URL's db and rp options,
	// name what the InfluxQL reads (History) query in place of the
	// bucket's parts: on InfluxDB 2.x, the database and retention policy
	// of the bucket's DBRP mapping. "" takes the bucket's part.
	Database, RetentionPolicy string
	// Token authenticates (from TokenEnv); "" for a server without auth.
	Token string `json:"-"`
	// Interval is the period of the llm_interval aggregates.
	Interval time.Duration
	// Buffer bounds the points waiting to be written; beyond it new
	// points are dropped and counted.
	Buffer int
	// Batch is the most points one write sends.
	Batch int
	// FlushTimeout bounds the final flush at the end of a run.
	FlushTimeout time.Duration
	// Requests turns the per-request llm_request points on (default) or
	// off.
	Requests bool
}

// Defaults of the URL's options.
const (
	DefaultBucket       = "llmrun"
	DefaultInterval     = 5 * time.Second
	DefaultBuffer       = 100_000
	DefaultBatch        = 5_000
	DefaultFlushTimeout = 10 * time.Second
)

// options are the URL query's keys, for the error of an unknown one.
var options = []string{"org", "bucket", "db", "rp", "interval", "buffer", "batch", "flushTimeout", "requests"}

// ParseConfig parses URL, http(s)://host:port[/path]?org=…&bucket=…&
// db=…&rp=…&interval=5s&buffer=100000&batch=5000&flushTimeout=10s&requests=true,
// taking the token from getenv(TokenEnv) and org and bucket defaults from
// LLMRUN_INFLUXDB_ORG and LLMRUN_INFLUXDB_BUCKET.
func ParseConfig(raw string, getenv func(string) string) (Config, error) {
	c := Config{Org: getenv("LLMRUN_INFLUXDB_ORG"), Bucket: getenv("LLMRUN_INFLUXDB_BUCKET"), Token: getenv(TokenEnv),
		Interval: DefaultInterval, Buffer: DefaultBuffer, Batch: DefaultBatch, FlushTimeout: DefaultFlushTimeout, Requests: true}
	if c.Bucket == "" {
		c.Bucket = DefaultBucket
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("influxdb: %q is not a URL like http://127.0.0.1:8086?bucket=llmrun", raw)
	}
	if u.User != nil {
		return c, fmt.Errorf("influxdb: put no credentials in the URL (they would land in shell history and result files); set %s", TokenEnv)
	}
	q := u.Query()
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "org":
			c.Org = v
		case "bucket":
			c.Bucket = v
		case "db", "rp":
			if v == "" {
				return c, fmt.Errorf("influxdb: %s=: want a name (leave the option out to read the bucket's)", k)
			}
			if k == "db" {
				c.Database = v
			} else {
				c.RetentionPolicy = v
			}
		case "interval", "flushTimeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return c, fmt.Errorf("influxdb: %s=%q: want a positive duration such as 5s", k, v)
			}
			if k == "interval" {
				c.Interval = d
			} else {
				c.FlushTimeout = d
			}
		case "buffer", "batch":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return c, fmt.Errorf("influxdb: %s=%q: want a whole number ≥ 1", k, v)
			}
			if k == "buffer" {
				c.Buffer = n
			} else {
				c.Batch = n
			}
		case "requests":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return c, fmt.Errorf("influxdb: requests=%q: want true or false", v)
			}
			c.Requests = b
		case "token":
			return c, fmt.Errorf("influxdb: put no token in the URL (it would land in shell history and result files); set %s", TokenEnv)
		default:
			return c, fmt.Errorf("influxdb: unknown option %q in the URL (known: %s)", k, strings.Join(options, ", "))
		}
	}
	if c.Interval < time.Second || c.Interval > 10*time.Second {
		return c, fmt.Errorf("influxdb: interval=%s: want 1s to 10s", c.Interval)
	}
	if c.Batch > c.Buffer {
		c.Batch = c.Buffer
	}
	u.RawQuery, u.Fragment = "", ""
	c.URL = strings.TrimSuffix(u.String(), "/")
	return c, nil
}

// String describes the configuration without its token.
func (c Config) String() string {
	s := "influxdb " + c.URL + " (bucket " + c.Bucket
	if c.Org != "" {
		s += ", org " + c.Org
	}
	return s + ")"
}

// queryTarget returns the database and retention policy the InfluxQL
// reads query: the db and rp options, else the bucket's parts before and
// after its "/" (rp "" for the database's default retention policy).
func (c Config) queryTarget() (db, rp string) {
	db, rp, _ = strings.Cut(c.Bucket, "/")
	if c.Database != "" {
		db = c.Database
	}
	if c.RetentionPolicy != "" {
		rp = c.RetentionPolicy
	}
	return db, rp
}

// NewClient returns a client for the server; the caller closes it.
func (c Config) NewClient() influxdb2.Client {
	return influxdb2.NewClientWithOptions(c.URL, c.Token, influxdb2.DefaultOptions().SetHTTPRequestTimeout(uint(30)))
}

// maxErrorText bounds an error's text once its secrets are redacted and
// its control characters escaped (redact.Secrets.Clean).
const maxErrorText = 4 << 10

// secrets are the credentials c holds, for redact: the token and, when it
// is user:password (sent as Basic authentication), the password and the
// pair.
func (c Config) secrets() redact.Secrets {
	var s redact.Secrets
	s.Add(c.Token)
	if user, password, ok := strings.Cut(c.Token, ":"); ok {
		s.AddBasic(user, password)
	}
	return s
}

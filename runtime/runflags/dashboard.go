package runflags

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/output/dashboard"
)

// Dashboard are the flags of llmrun run's live web dashboard.
type Dashboard struct {
	addr           string
	period, linger time.Duration
	record         string
}

// The environment variables of the dashboard, read where its flag is not
// given (k6's K6_WEB_DASHBOARD, K6_WEB_DASHBOARD_PERIOD).
const (
	DashboardEnv       = "LLMRUN_DASHBOARD"
	DashboardPeriodEnv = "LLMRUN_DASHBOARD_PERIOD"
	DashboardLingerEnv = "LLMRUN_DASHBOARD_LINGER"
)

// Register adds the dashboard's flags to fs.
func (d *Dashboard) Register(fs *pflag.FlagSet) {
	fs.StringVar(&d.addr, "dashboard", "", "serve a live web dashboard of the run at this HOST:PORT (given alone: "+dashboard.DefaultAddr+"; default $"+DashboardEnv+": true or an address; see docs/dashboard.md)")
	fs.Lookup("dashboard").NoOptDefVal = dashboard.DefaultAddr
	fs.DurationVar(&d.period, "dashboard-period", dashboard.DefaultPeriod, "how often the dashboard's figures are updated (default $"+DashboardPeriodEnv+" when set)")
	fs.StringVar(&d.record, "dashboard-record", "", "record the dashboard's events to this gzip FILE, with or without --dashboard, to replay them later (see docs/dashboard.md)")
	fs.DurationVar(&d.linger, "dashboard-linger", 0, "keep serving the dashboard this long after the run ends, or until Ctrl-C (default $"+DashboardLingerEnv+", else 0)")
}

// Config reads the dashboard's flags, else their environment variables,
// into its configuration; nil when the run serves no dashboard.
func (d Dashboard) Config(fs *pflag.FlagSet, getenv func(string) string) (*dashboard.Config, error) {
	addr := d.addr
	if !fs.Changed("dashboard") {
		switch v := getenv(DashboardEnv); v {
		case "", "false", "0":
			addr = ""
		case "true", "1":
			addr = dashboard.DefaultAddr
		default:
			addr = v
		}
	}
	period, err := durationOrEnv(fs, "dashboard-period", d.period, DashboardPeriodEnv, getenv)
	if err != nil {
		return nil, err
	}
	linger, err := durationOrEnv(fs, "dashboard-linger", d.linger, DashboardLingerEnv, getenv)
	if err != nil {
		return nil, err
	}
	if addr == "" && d.record == "" {
		// Name the flag given, and what it lacks.
		if fs.Changed("dashboard-period") {
			return nil, fmt.Errorf("--dashboard-period: no --dashboard (or $%s) nor --dashboard-record asks for the dashboard's updates; add one of them, or leave the flag out", DashboardEnv)
		}
		if fs.Changed("dashboard-linger") {
			return nil, fmt.Errorf("--dashboard-linger: no --dashboard (or $%s) asks for a dashboard to keep serving; add it, or leave the flag out", DashboardEnv)
		}
		return nil, nil
	}
	if period <= 0 {
		return nil, fmt.Errorf("--dashboard-period must be positive, got %s", period)
	}
	if linger < 0 {
		return nil, fmt.Errorf("--dashboard-linger must not be negative, got %s", linger)
	}
	if addr == "" && linger > 0 {
		return nil, fmt.Errorf("--dashboard-linger keeps serving the dashboard, and no --dashboard (or $%s) asks for one: --dashboard-record only records; add --dashboard, or leave --dashboard-linger out", DashboardEnv)
	}
	return &dashboard.Config{Addr: addr, Period: period, Linger: linger, Record: d.record}, nil
}

// durationOrEnv is the named flag's value when given, else the
// environment variable's when set, else the flag's default.
func durationOrEnv(fs *pflag.FlagSet, flag string, value time.Duration, env string, getenv func(string) string) (time.Duration, error) {
	v := getenv(env)
	if fs.Changed(flag) || v == "" {
		return value, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("$%s=%q: not a duration (e.g. 1s, 500ms): %w", env, v, err)
	}
	return d, nil
}

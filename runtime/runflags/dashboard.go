package runflags

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/output/dashboard"
)

// Dashboard are the flags of llmrun run's live web dashboard.
type Dashboard struct {
	addr           string
	period, linger time.Duration
	record         string
	export         string
	open           bool
}

// The environment variables of the dashboard, read where its flag is not
// given (k6's K6_WEB_DASHBOARD, K6_WEB_DASHBOARD_PERIOD, _OPEN, _EXPORT,
// _RECORD).
const (
	DashboardEnv       = "LLMRUN_DASHBOARD"
	DashboardPeriodEnv = "LLMRUN_DASHBOARD_PERIOD"
	DashboardLingerEnv = "LLMRUN_DASHBOARD_LINGER"
	DashboardOpenEnv   = "LLMRUN_DASHBOARD_OPEN"
	DashboardExportEnv = "LLMRUN_DASHBOARD_EXPORT"
	DashboardRecordEnv = "LLMRUN_DASHBOARD_RECORD"
	// BrowserEnv is the command --dashboard-open runs, as other programs
	// read it.
	BrowserEnv = "BROWSER"
)

// Register adds the dashboard's flags to fs.
func (d *Dashboard) Register(fs *pflag.FlagSet) {
	fs.StringVar(&d.addr, "dashboard", "", "serve a live web dashboard of the run at this HOST:PORT (given alone: "+dashboard.DefaultAddr+"; default $"+DashboardEnv+": true or an address; see docs/dashboard.md)")
	fs.Lookup("dashboard").NoOptDefVal = dashboard.DefaultAddr
	fs.DurationVar(&d.period, "dashboard-period", dashboard.DefaultPeriod, "how often the dashboard's figures are updated ($"+DashboardPeriodEnv+" when set)")
	fs.StringVar(&d.record, "dashboard-record", "", "record the dashboard's events to this gzip FILE, with or without --dashboard, to replay them later (default $"+DashboardRecordEnv+"; see docs/dashboard.md)")
	fs.DurationVar(&d.linger, "dashboard-linger", 0, "keep serving the dashboard this long after the run ends, or until Ctrl-C (default $"+DashboardLingerEnv+", else 0)")
	fs.StringVar(&d.export, "dashboard-export", "", "write the dashboard of the whole run as one HTML FILE when it ends, also when stopped early, with or without --dashboard (default $"+DashboardExportEnv+")")
	fs.BoolVar(&d.open, "dashboard-open", false, "open the dashboard in the browser ($"+BrowserEnv+", else the system's) once it is served (default $"+DashboardOpenEnv+": true or false)")
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
	record := stringOrEnv(fs, "dashboard-record", d.record, DashboardRecordEnv, getenv)
	export := stringOrEnv(fs, "dashboard-export", d.export, DashboardExportEnv, getenv)
	open, err := boolOrEnv(fs, "dashboard-open", d.open, DashboardOpenEnv, getenv)
	if err != nil {
		return nil, err
	}
	if addr == "" && fs.Changed("dashboard-open") && open {
		return nil, fmt.Errorf("--dashboard-open: no --dashboard (or $%s) serves a page to open; add it, or leave the flag out", DashboardEnv)
	}
	if addr == "" && record == "" && export == "" {
		// Name the flag given, and what it lacks.
		if fs.Changed("dashboard-period") {
			return nil, fmt.Errorf("--dashboard-period: no --dashboard (or $%s), --dashboard-record nor --dashboard-export asks for the dashboard's updates; add one of them, or leave the flag out", DashboardEnv)
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
		return nil, fmt.Errorf("--dashboard-linger keeps serving the dashboard, and no --dashboard (or $%s) asks for one: --dashboard-record and --dashboard-export only write files; add --dashboard, or leave --dashboard-linger out", DashboardEnv)
	}
	cfg := &dashboard.Config{Addr: addr, Period: period, Linger: linger, Record: record, Export: export}
	// A page opens only where one is served: $LLMRUN_DASHBOARD_OPEN set
	// for every run opens none for a run that only records.
	if open && addr != "" {
		cfg.Open, cfg.Browser = true, getenv(BrowserEnv)
	}
	return cfg, nil
}

// stringOrEnv is the named flag's value when given, else the environment
// variable's.
func stringOrEnv(fs *pflag.FlagSet, flag, value, env string, getenv func(string) string) string {
	if fs.Changed(flag) {
		return value
	}
	return getenv(env)
}

// boolOrEnv is the named flag's value when given, else the environment
// variable's when set (true or false, 1 or 0), else the flag's default.
func boolOrEnv(fs *pflag.FlagSet, flag string, value bool, env string, getenv func(string) string) (bool, error) {
	v := getenv(env)
	if fs.Changed(flag) || v == "" {
		return value, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("$%s=%q: want true or false", env, v)
	}
	return b, nil
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

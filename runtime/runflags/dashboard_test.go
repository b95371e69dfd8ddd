package runflags

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmrun/llmrun/runtime/output/dashboard"
)

func TestDashboardFlagsAndEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    *dashboard.Config
		wantErr string
	}{
		{name: "none", want: nil},
		{name: "flag alone", args: []string{"--dashboard"}, want: &dashboard.Config{Addr: "127.0.0.1:5665", Period: time.Second}},
		{name: "flag with address", args: []string{"--dashboard=127.0.0.1:0", "--dashboard-period=250ms", "--dashboard-linger=1m"},
			want: &dashboard.Config{Addr: "127.0.0.1:0", Period: 250 * time.Millisecond, Linger: time.Minute}},
		{name: "env true", env: map[string]string{DashboardEnv: "true", DashboardPeriodEnv: "10s"}, want: &dashboard.Config{Addr: "127.0.0.1:5665", Period: 10 * time.Second}},
		{name: "env address", env: map[string]string{DashboardEnv: "[::1]:7000", DashboardLingerEnv: "5s"}, want: &dashboard.Config{Addr: "[::1]:7000", Period: time.Second, Linger: 5 * time.Second}},
		{name: "env false", env: map[string]string{DashboardEnv: "false"}, want: nil},
		{name: "flag wins over env", args: []string{"--dashboard-period=2s"}, env: map[string]string{DashboardEnv: "1", DashboardPeriodEnv: "5s"}, want: &dashboard.Config{Addr: "127.0.0.1:5665", Period: 2 * time.Second}},
		{name: "bad env period", env: map[string]string{DashboardEnv: "true", DashboardPeriodEnv: "soon"}, wantErr: `$LLMRUN_DASHBOARD_PERIOD="soon": not a duration`},
		{name: "zero period", args: []string{"--dashboard", "--dashboard-period=0s"}, wantErr: "--dashboard-period must be positive"},
		{name: "period without dashboard", args: []string{"--dashboard-period=2s"}, wantErr: "--dashboard-period: no --dashboard (or $LLMRUN_DASHBOARD), --dashboard-record nor --dashboard-export"},
		{name: "linger without dashboard", args: []string{"--dashboard-linger=1m"}, wantErr: "--dashboard-linger: no --dashboard"},
		{name: "record alone", args: []string{"--dashboard-record=run.dash.gz", "--dashboard-period=2s"}, want: &dashboard.Config{Period: 2 * time.Second, Record: "run.dash.gz"}},
		{name: "record with dashboard", args: []string{"--dashboard", "--dashboard-record=run.dash.gz"}, want: &dashboard.Config{Addr: "127.0.0.1:5665", Period: time.Second, Record: "run.dash.gz"}},
		{name: "record with linger and no dashboard", args: []string{"--dashboard-record=run.dash.gz", "--dashboard-linger=1m"}, wantErr: "--dashboard-linger keeps serving the dashboard"},
		{name: "env record, export and open", env: map[string]string{DashboardEnv: "true", DashboardRecordEnv: "run.dash.gz", DashboardExportEnv: "run.html", DashboardOpenEnv: "true", BrowserEnv: "firefox"},
			want: &dashboard.Config{Addr: "127.0.0.1:5665", Period: time.Second, Record: "run.dash.gz", Export: "run.html", Open: true, Browser: "firefox"}},
		{name: "flags win over env files", args: []string{"--dashboard-record=a.gz", "--dashboard-export=a.html"}, env: map[string]string{DashboardRecordEnv: "b.gz", DashboardExportEnv: "b.html"},
			want: &dashboard.Config{Period: time.Second, Record: "a.gz", Export: "a.html"}},
		{name: "export alone", args: []string{"--dashboard-export=run.html"}, want: &dashboard.Config{Period: time.Second, Export: "run.html"}},
		{name: "export alone with period", env: map[string]string{DashboardExportEnv: "run.html", DashboardPeriodEnv: "5s"}, want: &dashboard.Config{Period: 5 * time.Second, Export: "run.html"}},
		{name: "open flag", args: []string{"--dashboard", "--dashboard-open"}, env: map[string]string{DashboardOpenEnv: "false"}, want: &dashboard.Config{Addr: "127.0.0.1:5665", Period: time.Second, Open: true}},
		{name: "open flag false wins over env", args: []string{"--dashboard", "--dashboard-open=false"}, env: map[string]string{DashboardOpenEnv: "true"}, want: &dashboard.Config{Addr: "127.0.0.1:5665", Period: time.Second}},
		{name: "bad env open", env: map[string]string{DashboardEnv: "true", DashboardOpenEnv: "yes please"}, wantErr: `$LLMRUN_DASHBOARD_OPEN="yes please": want true or false`},
		{name: "open flag without dashboard", args: []string{"--dashboard-open", "--dashboard-export=run.html"}, wantErr: "--dashboard-open: no --dashboard (or $LLMRUN_DASHBOARD) serves a page to open"},
		{name: "env open without dashboard opens none", env: map[string]string{DashboardOpenEnv: "1", DashboardExportEnv: "run.html"}, want: &dashboard.Config{Period: time.Second, Export: "run.html"}},
		{name: "env open alone", env: map[string]string{DashboardOpenEnv: "true"}, want: nil},
		{name: "export with linger and no dashboard", args: []string{"--dashboard-export=run.html", "--dashboard-linger=1m"}, wantErr: "--dashboard-linger keeps serving the dashboard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			var d Dashboard
			d.Register(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := d.Config(fs, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Errorf("config %+v, want %+v", got, tc.want)
			}
		})
	}
}

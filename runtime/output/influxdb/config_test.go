package influxdb

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	defaults := Config{URL: "http://127.0.0.1:8086", Bucket: DefaultBucket, Interval: DefaultInterval, Buffer: DefaultBuffer, Batch: DefaultBatch,
		FlushTimeout: DefaultFlushTimeout, Requests: true}
	with := func(f func(*Config)) Config {
		c := defaults
		f(&c)
		return c
	}
	tests := []struct {
		name    string
		raw     string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{name: "defaults", raw: "http://127.0.0.1:8086", want: defaults},
		{name: "trailing slash", raw: "http://127.0.0.1:8086/", want: defaults},
		{name: "path kept", raw: "https://influx.example.com/proxy/", want: with(func(c *Config) { c.URL = "https://influx.example.com/proxy" })},
		{name: "every option", raw: "http://127.0.0.1:8086?org=acme&bucket=perf/autogen&db=llmrun&rp=weekly&interval=2s&buffer=1000&batch=100&flushTimeout=3s&requests=false",
			want: with(func(c *Config) {
				c.Org, c.Bucket, c.Interval, c.Buffer, c.Batch, c.FlushTimeout, c.Requests = "acme", "perf/autogen", 2*time.Second, 1000, 100, 3*time.Second, false
				c.Database, c.RetentionPolicy = "llmrun", "weekly"
			})},
		{name: "batch at most buffer", raw: "http://127.0.0.1:8086?buffer=10", want: with(func(c *Config) { c.Buffer, c.Batch = 10, 10 })},
		{name: "environment", raw: "http://127.0.0.1:8086",
			env:  map[string]string{"LLMRUN_INFLUXDB_ORG": "acme", "LLMRUN_INFLUXDB_BUCKET": "perf", TokenEnv: "u:p"},
			want: with(func(c *Config) { c.Org, c.Bucket, c.Token = "acme", "perf", "u:p" })},
		{name: "URL over environment", raw: "http://127.0.0.1:8086?bucket=b&org=o",
			env:  map[string]string{"LLMRUN_INFLUXDB_ORG": "acme", "LLMRUN_INFLUXDB_BUCKET": "perf"},
			want: with(func(c *Config) { c.Org, c.Bucket = "o", "b" })},
		{name: "interval 1s", raw: "http://127.0.0.1:8086?interval=1s", want: with(func(c *Config) { c.Interval = time.Second })},
		{name: "interval 10s", raw: "http://127.0.0.1:8086?interval=10s", want: with(func(c *Config) { c.Interval = 10 * time.Second })},
		{name: "interval too short", raw: "http://127.0.0.1:8086?interval=500ms", wantErr: "interval=500ms: want 1s to 10s"},
		{name: "interval too long", raw: "http://127.0.0.1:8086?interval=11s", wantErr: "interval=11s: want 1s to 10s"},
		{name: "interval not a duration", raw: "http://127.0.0.1:8086?interval=5", wantErr: `interval="5": want a positive duration`},
		{name: "flush timeout negative", raw: "http://127.0.0.1:8086?flushTimeout=-1s", wantErr: `flushTimeout="-1s"`},
		{name: "buffer zero", raw: "http://127.0.0.1:8086?buffer=0", wantErr: `buffer="0": want a whole number`},
		{name: "batch not a number", raw: "http://127.0.0.1:8086?batch=many", wantErr: `batch="many"`},
		{name: "requests not a boolean", raw: "http://127.0.0.1:8086?requests=maybe", wantErr: `requests="maybe": want true or false`},
		{name: "token in URL", raw: "http://127.0.0.1:8086?token=secret", wantErr: "put no token in the URL"},
		{name: "credentials in URL", raw: "http://user:secret@127.0.0.1:8086", wantErr: "put no credentials in the URL"},
		{name: "db empty", raw: "http://127.0.0.1:8086?db=", wantErr: "db=: want a name"},
		{name: "rp empty", raw: "http://127.0.0.1:8086?rp=&db=x", wantErr: "rp=: want a name"},
		{name: "unknown option", raw: "http://127.0.0.1:8086?bukket=x", wantErr: `unknown option "bukket" in the URL (known: org, bucket, db, rp, interval`},
		{name: "not http", raw: "udp://127.0.0.1:8089", wantErr: "is not a URL like"},
		{name: "no host", raw: "http://", wantErr: "is not a URL like"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig(tt.raw, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("error %q shows the secret", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if tt.want.Token != "" && strings.Contains(got.String(), tt.want.Token) {
				t.Errorf("String() %q shows the token", got.String())
			}
		})
	}
}

// New gives sizes and durations left out their defaults, and a batch no
// larger than the buffer.
func TestNewDefaults(t *testing.T) {
	o := New(Config{URL: "http://127.0.0.1:8086", Buffer: 10})
	want := Config{URL: "http://127.0.0.1:8086", Interval: DefaultInterval, Buffer: 10, Batch: 10, FlushTimeout: DefaultFlushTimeout}
	if o.cfg != want {
		t.Errorf("got  %+v\nwant %+v", o.cfg, want)
	}
}

package influxdb

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"

	"github.com/llmrun/llmrun/internal/influxtest"
)

// Literals and identifiers escape what would end them or start an escape,
// and nothing else.
func TestQuoteInfluxQL(t *testing.T) {
	tests := []struct{ in, literal, ident string }{
		{"plain", `'plain'`, `"plain"`},
		{"", `''`, `""`},
		{`it's`, `'it\'s'`, `"it's"`},
		{`say "hi"`, `'say "hi"'`, `"say \"hi\""`},
		{`back\slash`, `'back\\slash'`, `"back\\slash"`},
		{"new\nline", `'new\nline'`, `"new\nline"`},
		{`\'; DROP DATABASE "x"; --`, `'\\\'; DROP DATABASE "x"; --'`, `"\\'; DROP DATABASE \"x\"; --"`},
		{"${x} /re/ ünï", `'${x} /re/ ünï'`, `"${x} /re/ ünï"`},
	}
	for _, tt := range tests {
		if got := influxQLString(tt.in); got != tt.literal {
			t.Errorf("literal of %q: %s, want %s", tt.in, got, tt.literal)
		}
		if got := influxQLIdent(tt.in); got != tt.ident {
			t.Errorf("identifier of %q: %s, want %s", tt.in, got, tt.ident)
		}
	}
}

// The server reads hostile names and values quoted by influxQLIdent and
// influxQLString as they were written: a measurement, a tag key and a tag
// value with quotes and backslashes, a string field with a newline.
func testInfluxQLQuoting(t *testing.T, s *influxtest.Server) {
	// Line protocol reads a backslash before a space or "=" as an escape,
	// so none is there; the client escapes a newline in a string field,
	// so that one is written as a raw record.
	const measurement, tagKey, tagValue, note = `odd "m" \x 'y'`, `k'e "y\z`, `it's a \x "value"; --`, "line\nbreak 'q'"
	client := influxdb2.NewClient(s.URL, s.Token)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	api := client.WriteAPIBlocking("", s.Bucket)
	if err := api.WritePoint(ctx, influxdb2.NewPoint(measurement, map[string]string{tagKey: tagValue}, map[string]any{"n": int64(7)}, time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := api.WriteRecord(ctx, `quoting_notes note="`+note+`"`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, stmt string
		rows       int
	}{
		{"the tag", "SELECT * FROM " + influxQLIdent(measurement) + " WHERE " + influxQLIdent(tagKey) + " = " + influxQLString(tagValue), 1},
		{"another tag value", "SELECT * FROM " + influxQLIdent(measurement) + " WHERE " + influxQLIdent(tagKey) + " = " + influxQLString(tagValue+"'"), 0},
		{"the string field", "SELECT * FROM " + influxQLIdent("quoting_notes") + " WHERE " + influxQLIdent("note") + " = " + influxQLString(note), 1},
	}
	for _, tt := range tests {
		found, err := influxQL(ctx, testConfig(s), tt.stmt)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		rows := 0
		for _, se := range found {
			rows += len(se.Values)
		}
		if rows != tt.rows {
			t.Errorf("%s: %d rows, want %d: %+v\n%s", tt.name, rows, tt.rows, found, tt.stmt)
		}
	}
}

// sentQuery is what a query sent: its method, parameters and
// Authorization header.
type sentQuery struct {
	method, auth string
	params       url.Values
}

// The query is a GET of /query with the database and retention policy of
// the config, epoch=ns, and the token as Basic authentication when it is
// user:password, else as "Authorization: Token".
func TestQueryRequest(t *testing.T) {
	sent := make(chan sentQuery, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent <- sentQuery{method: r.Method + " " + r.URL.Path, auth: r.Header.Get("Authorization"), params: r.URL.Query()}
		json.NewEncoder(w).Encode(map[string]any{"results": []any{map[string]any{"statement_id": 0}}})
	}))
	defer srv.Close()
	basic := func(user, password string) string {
		r, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		r.SetBasicAuth(user, password)
		return r.Header.Get("Authorization")
	}
	tests := []struct {
		name   string
		cfg    Config
		auth   string
		db, rp string
	}{
		{"user:password and database/rp", Config{Bucket: "perf/short", Token: "user:pa ss:x"}, basic("user", "pa ss:x"), "perf", "short"},
		{"an opaque token and a bucket", Config{Bucket: "perf", Token: "opaque-token=="}, "Token opaque-token==", "perf", ""},
		{"no token, db and rp options", Config{Bucket: "perf", Database: "llmrun", RetentionPolicy: "autogen"}, "", "llmrun", "autogen"},
		{"a db option keeps the bucket's rp", Config{Bucket: "perf/short", Database: "llmrun"}, "", "llmrun", "short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.URL = srv.URL
			if _, err := influxQL(context.Background(), tt.cfg, "SHOW DATABASES"); err != nil {
				t.Fatal(err)
			}
			got := <-sent
			want := url.Values{"db": {tt.db}, "q": {"SHOW DATABASES"}, "epoch": {"ns"}}
			if tt.rp != "" {
				want.Set("rp", tt.rp)
			}
			if got.method != "GET /query" || got.auth != tt.auth || got.params.Encode() != want.Encode() {
				t.Errorf("sent %s, Authorization %q, %v; want GET /query, %q, %v", got.method, got.auth, got.params, tt.auth, want)
			}
		})
	}
}

// A token a server echoes where its answer is cut (messageBytes) is
// redacted whole, not left in part.
func TestDecodeAnswerRedactsBeforeCutting(t *testing.T) {
	const token = "plaintoken123SECRET"
	cfg := Config{Token: token}
	for body, want := range map[string]string{
		strings.Repeat("x", messageBytes-5) + token + " and more": strings.Repeat("x", messageBytes-5) + "[REDA…",
		`{"error":"bad auth: ` + token + `"}`:                     "bad auth: [REDACTED]",
	} {
		if _, msg := decodeAnswer(http.StatusUnauthorized, []byte(body), cfg.secrets()); msg != want {
			t.Errorf("decodeAnswer of %q: %q, want %q", body, msg, want)
		}
	}
}

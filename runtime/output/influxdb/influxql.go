package influxdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llmrun/llmrun/internal/redact"
)

// Bounds of one InfluxQL query.
const (
	// queryTimeout bounds the query, from request to answer read.
	queryTimeout = 30 * time.Second
	// maxAnswerBytes bounds the answer read into memory.
	maxAnswerBytes = 64 << 20
	// messageBytes bounds how much of an answer that is no InfluxDB
	// JSON an error quotes.
	messageBytes = 200
)

// answerSeries is one series of an InfluxQL answer: the tags it was
// grouped by, its rows, each with a value (or nil) per column.
type answerSeries struct {
	Tags    map[string]string `json:"tags"`
	Columns []string          `json:"columns"`
	Values  [][]any           `json:"values"`
}

// queryAnswer is the JSON answer of /query: a result per statement, with
// its series or its error, or an error of the whole request (2.x and 3.x
// may put it in message).
type queryAnswer struct {
	Results []struct {
		Series []answerSeries `json:"series"`
		Error  string         `json:"error"`
	} `json:"results"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

// serverError is what the server said was wrong with the query: the
// request's error, else the first statement's; "" when nothing was.
func (a queryAnswer) serverError() string {
	if a.Error != "" {
		return a.Error
	}
	if a.Message != "" {
		return a.Message
	}
	for _, r := range a.Results {
		if r.Error != "" {
			return r.Error
		}
	}
	return ""
}

// influxQL runs one InfluxQL statement with GET <URL>/query on the
// database and retention policy of cfg.queryTarget, times as epoch
// nanoseconds, within queryTimeout, and returns the series of its answer. Its errors name the
// URL and the database, quote the server, and say what to fix.
func influxQL(ctx context.Context, cfg Config, stmt string) ([]answerSeries, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	db, rp := cfg.queryTarget()
	req, err := queryRequest(ctx, cfg, db, rp, stmt)
	if err != nil {
		return nil, fmt.Errorf("influxdb %s: %w", cfg.URL, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, unreachableError(ctx, cfg, err)
	}
	defer resp.Body.Close()
	body, err := readAnswer(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("influxdb %s: reading the answer to a query of database %q: %w", cfg.URL, db, err)
	}
	found, msg := decodeAnswer(resp.StatusCode, body, cfg.secrets())
	if msg != "" {
		return nil, answerError(cfg, resp, msg)
	}
	return found, nil
}

// decodeAnswer returns the series of an answer of HTTP status code, its
// numbers as json.Number; or, when the query failed, what the server said
// (its JSON error, else the start of the body), its secrets redacted before
// it is cut, so that no part of one is left.
func decodeAnswer(code int, body []byte, secrets redact.Secrets) ([]answerSeries, string) {
	var answer queryAnswer
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	err := dec.Decode(&answer)
	if msg := answer.serverError(); msg != "" {
		return nil, secrets.Redact(msg)
	}
	if code != http.StatusOK || err != nil {
		return nil, bodyStart(secrets.Redact(string(body)))
	}
	var found []answerSeries
	for _, r := range answer.Results {
		found = append(found, r.Series...)
	}
	return found, ""
}

// queryRequest is the GET of stmt on database db (retention policy rp,
// when set), authenticated with cfg's token.
func queryRequest(ctx context.Context, cfg Config, db, rp, stmt string) (*http.Request, error) {
	params := url.Values{"db": {db}, "q": {stmt}, "epoch": {"ns"}}
	if rp != "" {
		params.Set("rp", rp)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.URL+"/query?"+params.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	authorize(req, cfg.Token)
	return req, nil
}

// authorize adds the token to req as /query takes it: "user:password" (an
// InfluxDB 1.x user, or a 2.x v1 authorization) as Basic authentication,
// which takes any password (1.8 parses "Authorization: Token user:password"
// too, but not with a space in the password); any other token as
// "Authorization: Token TOKEN" (2.x and 3.x).
func authorize(req *http.Request, token string) {
	if token == "" {
		return
	}
	if user, password, ok := strings.Cut(token, ":"); ok {
		req.SetBasicAuth(user, password)
		return
	}
	req.Header.Set("Authorization", "Token "+token)
}

// errAnswerTooLarge is readAnswer's error for an answer over its bound;
// each caller says what to ask for instead.
var errAnswerTooLarge = fmt.Errorf("the answer is larger than %d MiB", maxAnswerBytes>>20)

// readAnswer reads a body of at most maxAnswerBytes.
func readAnswer(body io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(body, maxAnswerBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxAnswerBytes {
		return nil, errAnswerTooLarge
	}
	return b, nil
}

// bodyStart quotes the start of an answer that is no InfluxDB JSON (a
// proxy's error page), as valid UTF-8.
func bodyStart(body string) string {
	s := strings.TrimSpace(body)
	if len(s) > messageBytes {
		s = s[:messageBytes]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	if s == "" {
		return "an empty answer"
	}
	return s
}

// unreachableError describes a query that got no answer: the context's
// end, or the connection's failure (without the request's URL, which
// carries the whole query).
func unreachableError(ctx context.Context, cfg Config, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("influxdb %s: no answer to the query: %w", cfg.URL, ctx.Err())
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Errorf("influxdb %s: unreachable (is the server running, and is the URL right?): %w", cfg.URL, err)
}

// answerError describes a query the server refused or failed, quoting its
// status and message (redacted by decodeAnswer), with the usual remedy.
func answerError(cfg Config, resp *http.Response, msg string) error {
	db, rp := cfg.queryTarget()
	said := fmt.Sprintf("HTTP %s: %q", resp.Status, msg)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		if cfg.Token == "" {
			return fmt.Errorf("influxdb %s: the server wants a token (%s): set %s to a token that may read database %q (on InfluxDB 1.8, user:password)", cfg.URL, said, TokenEnv, db)
		}
		return fmt.Errorf("influxdb %s: the token was refused (%s): set %s to a token that may read database %q (on InfluxDB 1.8, user:password)", cfg.URL, said, TokenEnv, db)
	case strings.Contains(msg, "database not found"):
		return fmt.Errorf("influxdb %s: database %q not found (%s): check the bucket, or name the database with the URL's db= option (on InfluxDB 2.x, the database of the bucket's DBRP mapping: influx v1 dbrp create)", cfg.URL, db, said)
	case strings.Contains(msg, "retention policy not found"):
		return fmt.Errorf("influxdb %s: retention policy %q of database %q not found (%s): check the bucket's part after \"/\", or name the retention policy with the URL's rp= option", cfg.URL, rp, db, said)
	default:
		return fmt.Errorf("influxdb %s: the query of database %q failed (%s)", cfg.URL, db, said)
	}
}

// quoteInfluxQL quotes s between two quote characters as InfluxQL reads
// a string literal ('…') or an identifier ("…"): the backslash, the quote
// and a newline escaped, the only escapes InfluxQL knows.
func quoteInfluxQL(s, quote string) string {
	return quote + strings.NewReplacer(`\`, `\\`, quote, `\`+quote, "\n", `\n`).Replace(s) + quote
}

// influxQLString is s as an InfluxQL string literal.
func influxQLString(s string) string { return quoteInfluxQL(s, `'`) }

// influxQLIdent is name as an InfluxQL (quoted) identifier.
func influxQLIdent(name string) string { return quoteInfluxQL(name, `"`) }

// influxQLTag is the tag key as an InfluxQL identifier cast to a tag
// ("key"::tag), so that a condition on it never reads a field of the
// same name.
func influxQLTag(key string) string { return influxQLIdent(key) + "::tag" }

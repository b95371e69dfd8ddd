package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

func TestRedactEveryForm(t *testing.T) {
	const secret = "hf_SECRETtok/abc+def=ghi"
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	var s Secrets
	s.Add(secret)
	s.AddBasic("hubuser", "HubPassw0rd")
	for _, tc := range []struct{ name, echoed string }{
		{"raw", secret},
		{"query escaped", url.QueryEscape(secret)},
		{"path escaped", url.PathEscape(secret)},
		{"Python quote(), / kept", "hf_SECRETtok/abc%2Bdef%3Dghi"},
		{"Python quote(safe='')", "hf_SECRETtok%2Fabc%2Bdef%3Dghi"},
		{"escapes in lower case", "hf_SECRETtok%2fabc%2bdef%3dghi"},
		{"upper-cased", strings.ToUpper(secret)},
		{"lower-cased", strings.ToLower(secret)},
		{"base64", b64(secret)},
		{"base64 URL, unpadded", base64.RawURLEncoding.EncodeToString([]byte(secret))},
		{"Basic pair", "Basic " + b64("hubuser:HubPassw0rd")},
		{"password", "HubPassw0rd"},
		{"password upper-cased", "HUBPASSW0RD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.Redact("before " + tc.echoed + " after")
			if strings.Contains(got, tc.echoed) || !strings.Contains(got, Mask) {
				t.Errorf("Redact left %q in %q", tc.echoed, got)
			}
			if !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
				t.Errorf("Redact(%q) = %q: the text around the secret changed", tc.echoed, got)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	var s Secrets
	s.AddRawURL("http://hubuser:HubPassw0rd@127.0.0.1:9200/v1?api_key=k3y-value&on=1")
	for in, want := range map[string]string{
		"GET http://hubuser:HubPassw0rd@127.0.0.1:9200 failed":                                     "GET http://[REDACTED]@127.0.0.1:9200 failed",
		"Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("hubuser:HubPassw0rd")): "Authorization: Basic [REDACTED]",
		"key K3Y-VALUE, flag on=1": "key [REDACTED], flag on=1", // a short query value is not a secret
	} {
		if got := s.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactLongestFirst(t *testing.T) {
	var s Secrets
	s.Add("abcd")
	s.Add("abcd-efgh")
	if got := s.Redact("x abcd-efgh y abcd"); got != "x [REDACTED] y [REDACTED]" {
		t.Errorf("got %q: a part of the longer secret survived", got)
	}
}

func TestAddDoesNotTouchACopy(t *testing.T) {
	var base Secrets
	base.Add("first-secret")
	extended := base
	extended.Add("second-secret")
	if got := base.Redact("second-secret"); got != "second-secret" {
		t.Errorf("adding to a copy changed the original: %q", got)
	}
	if got := extended.Redact("first-secret second-secret"); got != "[REDACTED] [REDACTED]" {
		t.Errorf("extended copy: %q", got)
	}
}

func TestCleanEscapesControls(t *testing.T) {
	var s Secrets
	s.Add("plaintoken123SECRET")
	got := s.Clean("\x1b[31mbad auth: Token plaintoken123SECRET\x1b[0m", 1<<10)
	if want := `\x1b[31mbad auth: Token [REDACTED]\x1b[0m`; got != want {
		t.Errorf("Clean = %q, want %q", got, want)
	}
}

func TestRedactCut(t *testing.T) {
	var s Secrets
	s.Add("sk-ant/abc+def=ghi")
	for in, want := range map[string]string{
		"you sent sk-ant/abc+d":              "you sent [REDACTED]",
		"you sent SK-ANT%2FABC":              "you sent [REDACTED]",        // a start of an escaped, upper-cased form
		"you sent sk-ant/abc+def=ghi and sk": "you sent [REDACTED] and sk", // shorter than MinDerived: left
		"nothing of it":                      "nothing of it",
	} {
		if got := s.RedactCut(in); got != want {
			t.Errorf("RedactCut(%q) = %q, want %q", in, got, want)
		}
	}
}

package kube

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// secretWords are the words of a name that say it holds a secret: a query
// parameter (api_key, token) or a variable (HF_TOKEN, DB_PASSWORD,
// GITHUB_PAT, SESSION_COOKIE).
var secretWords = []string{
	"key", "apikey", "accesskey", "token", "secret", "password", "passwd", "pass", "pwd", "pat",
	"bearer", "cookie", "session", "sessionid", "sid", "jwt",
	"credential", "credentials", "creds", "auth", "authorization", "signature", "sig",
}

// SecretName reports whether a name (a variable, a tag, a query
// parameter) looks like that of a secret: one of its words, split at
// every character but a letter or digit and where a lower-case letter or
// digit is followed by an upper-case one (apiKey), is "key", "token",
// "secret", "password", "pat", "bearer", "cookie", "session", "auth",
// "credential" or the like, in any case. MAX_TOKENS and KEYWORDS are not.
func SecretName(name string) bool {
	return slices.ContainsFunc(nameWords(name), func(w string) bool { return slices.Contains(secretWords, w) })
}

// nameWords are name's words, lower-cased (see SecretName).
func nameWords(name string) []string {
	var words []string
	var word []rune
	flush := func() {
		if len(word) > 0 {
			words = append(words, strings.ToLower(string(word)))
			word = word[:0]
		}
	}
	var prev rune
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush()
			word = append(word, r)
		default:
			word = append(word, r)
		}
		prev = r
	}
	flush()
	return words
}

// secretAdvice says where a secret goes instead of the manifests.
const secretAdvice = "put it in the Secret named by --secret (kubectl create secret generic NAME --from-literal=VAR=…) and give --secret-env VAR: the pods then get $VAR from it by reference, and a script reads it as __ENV.VAR"

// CheckSetting refuses a NAME=VALUE setting (an -e variable, a --tag)
// that would put a secret in the manifests in plain text: one named like
// a secret (SecretName), or whose value is a URL carrying one (CheckURL).
// flag names the flag in the error ("-e", "--tag"), never the value.
func CheckSetting(flag, setting string) error {
	name, value, _ := strings.Cut(setting, "=")
	if SecretName(name) {
		return fmt.Errorf("%s %s=…: named like a secret, whose value the manifests would hold in plain text: %s", flag, name, secretAdvice)
	}
	return CheckURL(flag+" "+name, value)
}

// CheckURL refuses a URL that carries a secret: a user or password
// (user:password@host), or a query or fragment parameter named like a
// secret (?token=…, #access_token=…). what names the flag in the error. A
// value that is not a URL passes.
func CheckURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil
	}
	if u.User != nil {
		return fmt.Errorf("%s: the URL carries a user or password, which the manifests would hold in plain text: give the server's key through the Secret (--secret)", what)
	}
	for _, in := range []struct{ part, params string }{{"parameter", u.RawQuery}, {"fragment's parameter", u.Fragment}} {
		for _, kv := range strings.FieldsFunc(in.params, func(r rune) bool { return r == '&' || r == ';' }) {
			k, _, _ := strings.Cut(kv, "=")
			if name, err := url.QueryUnescape(k); err == nil && SecretName(name) || SecretName(k) {
				return fmt.Errorf("%s: the URL's %s %q looks like a secret, which the manifests would hold in plain text: %s", what, in.part, k, secretAdvice)
			}
		}
	}
	return nil
}

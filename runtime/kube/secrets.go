package kube

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// secretWords are the words of a name that say it holds a secret: a query
// parameter (api_key, token) or a variable (HF_TOKEN, DB_PASSWORD).
var secretWords = []string{"key", "apikey", "token", "secret", "password", "passwd", "pass", "pwd", "credential", "credentials", "auth", "authorization", "signature", "sig"}

// SecretName reports whether a name (a variable, a query parameter) looks
// like that of a secret: one of its words, split at '_', '-' and '.', is
// "key", "token", "secret", "password" or the like. MAX_TOKENS is not.
func SecretName(name string) bool {
	for w := range strings.FieldsFuncSeq(strings.ToLower(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if slices.Contains(secretWords, w) {
			return true
		}
	}
	return false
}

// CheckURL refuses a URL that carries a secret: a user or password
// (user:password@host), or a query parameter named like a secret
// (?token=…, ?api_key=…). what names the flag in the error. A value that
// is not a URL passes.
func CheckURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil
	}
	if u.User != nil {
		return fmt.Errorf("%s: the URL carries a user or password, which the manifests would hold in plain text: give the server's key through the Secret (--secret)", what)
	}
	for k := range u.Query() {
		if SecretName(k) {
			return fmt.Errorf("%s: the URL's parameter %q looks like a secret, which the manifests would hold in plain text: give it through the Secret (--secret)", what, k)
		}
	}
	return nil
}

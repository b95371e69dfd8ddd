//go:build unix

package dashboard

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestBrowserCommands(t *testing.T) {
	const url = "http://127.0.0.1:5665/"
	for _, tc := range []struct {
		browser string
		want    [][]string
	}{
		{"firefox", [][]string{{"firefox", url}}},
		{"firefox --new-window", [][]string{{"firefox", "--new-window", url}}},
		{"w3m %s -o x", [][]string{{"w3m", url, "-o", "x"}}},
		{"none-such:firefox", [][]string{{"none-such", url}, {"firefox", url}}},
		{"::", nil},
	} {
		if got := browserCommands(url, tc.browser); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("browserCommands(%q) = %q, want %q", tc.browser, got, tc.want)
		}
	}
}

// $BROWSER's first command that starts is run with the page's address;
// one that exits with an error is told to failed; none that starts is an
// error naming them.
func TestOpenBrowserRunsBrowser(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "opened")
	script := filepath.Join(dir, "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s' \"$1\" > "+got+"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	if err := OpenBrowser("http://127.0.0.1:1/", filepath.Join(dir, "none-such")+":"+script, func(err error) { failed <- err }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-failed:
		if !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), script) {
			t.Errorf("failed told %v, want the script's exit status 3", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the browser's exit was not told within a minute")
	}
	if b, err := os.ReadFile(got); err != nil || string(b) != "http://127.0.0.1:1/" {
		t.Errorf("the browser was given %q (%v), want the page's address", b, err)
	}
	err := OpenBrowser("http://127.0.0.1:1/", filepath.Join(dir, "none-such"), func(error) {})
	if err == nil || !strings.Contains(err.Error(), "none-such") {
		t.Errorf("OpenBrowser with no command that starts = %v, want an error naming it", err)
	}
}

package dashboard

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// OpenBrowser opens url in the user's browser without waiting for it.
// browser, when set, is $BROWSER: commands separated by the system's list
// separator (":" but on Windows), each with its arguments, given url in
// place of a "%s" or else after them; the first that starts is used.
// Without it the system's opener is: xdg-open, open on macOS, rundll32's
// url.dll on Windows. The error says that none started; failed is told
// later, from another goroutine, of one that started and exited with an
// error (xdg-open finding no browser).
func OpenBrowser(url, browser string, failed func(error)) error {
	var errs []error
	for _, command := range browserCommands(url, browser) {
		cmd := exec.Command(command[0], command[1:]...)
		if err := cmd.Start(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", command[0], err))
			continue
		}
		go func() {
			if err := cmd.Wait(); err != nil {
				failed(fmt.Errorf("%s %s: %w", command[0], url, err))
			}
		}()
		return nil
	}
	if len(errs) == 0 {
		return errors.New("$BROWSER names no command")
	}
	return fmt.Errorf("opening %s: %w", url, errors.Join(errs...))
}

// browserCommands are the commands that may open url, in the order to
// try them: browser's ($BROWSER), else the system's opener.
func browserCommands(url, browser string) [][]string {
	if strings.TrimSpace(browser) == "" {
		switch runtime.GOOS {
		case "darwin":
			return [][]string{{"open", url}}
		case "windows":
			return [][]string{{"rundll32", "url.dll,FileProtocolHandler", url}}
		default:
			return [][]string{{"xdg-open", url}}
		}
	}
	var commands [][]string
	for _, entry := range strings.Split(browser, string(os.PathListSeparator)) {
		words := strings.Fields(entry)
		if len(words) == 0 {
			continue
		}
		given := false
		for i, w := range words {
			if strings.Contains(w, "%s") {
				words[i], given = strings.ReplaceAll(w, "%s", url), true
			}
		}
		if !given {
			words = append(words, url)
		}
		commands = append(commands, words)
	}
	return commands
}

package console

import (
	"io"
	"log/slog"
)

// Logger prints the script's console output as "level=INFO msg=...
// vu=3" lines, without timestamps: the logger of a script's console
// output (engine.Config.Logger), given the Screen the live view draws on.
func Logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}

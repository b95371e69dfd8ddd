package js

import (
	"context"
	"log/slog"
	"testing"
)

// recorder is a slog.Handler that keeps records.
type recorder struct {
	min     slog.Level
	records []slog.Record
}

func (r *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= r.min }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.records = append(r.records, rec)
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

func TestConsole(t *testing.T) {
	tests := []struct {
		call  string
		level slog.Level
		msg   string
	}{
		{"console.log('hello', 'world')", slog.LevelInfo, "hello world"},
		{"console.info(1, true, null, undefined)", slog.LevelInfo, "1 true null undefined"},
		{"console.warn({ a: 1, b: [1, 'x'] })", slog.LevelWarn, `{"a":1,"b":[1,"x"]}`},
		{"console.error(new TypeError('bad'))", slog.LevelError, "TypeError: bad"},
		{"console.log('n =', [1, 2], (x) => x)", slog.LevelInfo, "n = [1,2] (x) => x"},
		{"const c = {}; c.c = c; console.log(c)", slog.LevelInfo, "[object Object]"},
		{"console.debug('hidden')", slog.LevelDebug, ""},
	}
	for _, tt := range tests {
		t.Run(tt.call, func(t *testing.T) {
			rec := &recorder{min: slog.LevelInfo}
			inst := mustInstantiate(t, mustCompile(t, "script.js", "export default function () { "+tt.call+" }"),
				InstanceConfig{VUID: 7, Logger: slog.New(rec)})
			mustCall(t, inst, "default")
			if tt.msg == "" {
				if len(rec.records) != 0 {
					t.Errorf("logged %d records below the handler's level", len(rec.records))
				}
				return
			}
			if len(rec.records) != 1 {
				t.Fatalf("logged %d records, want 1", len(rec.records))
			}
			r := rec.records[0]
			var vu int64 = -1
			r.Attrs(func(a slog.Attr) bool {
				if a.Key == "vu" {
					vu = a.Value.Int64()
				}
				return true
			})
			if r.Level != tt.level || r.Message != tt.msg || vu != 7 {
				t.Errorf("logged %v %q vu=%d, want %v %q vu=7", r.Level, r.Message, vu, tt.level, tt.msg)
			}
		})
	}
}

package wait

import (
	"context"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	start := time.Now()
	if !Sleep(context.Background(), 20*time.Millisecond) || time.Since(start) < 20*time.Millisecond {
		t.Error("Sleep returned before its duration")
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	start = time.Now()
	if Sleep(ctx, time.Hour) || time.Since(start) > 30*time.Second {
		t.Error("Sleep did not end with its context")
	}
	if Sleep(ctx, 0) {
		t.Error("a zero sleep on an ended context must report false")
	}
	if !Sleep(context.Background(), -time.Second) {
		t.Error("a negative sleep on a live context must report true")
	}
}

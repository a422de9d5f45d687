package testkit

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// LogBuffer collects what is written to it, from any goroutine: the logs of
// a service under test, or the output of a child process. Its zero value is
// ready to use.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p; it never fails.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns the lines written so far that contain every one of parts
// (all lines without parts), each with its newline.
func (b *LogBuffer) Lines(parts ...string) []string {
	var out []string
	for line := range strings.Lines(b.String()) {
		if containsAll(line, parts) {
			out = append(out, line)
		}
	}
	return out
}

// Has reports whether a line written so far contains every one of parts.
func (b *LogBuffer) Has(parts ...string) bool {
	for line := range strings.Lines(b.String()) {
		if containsAll(line, parts) {
			return true
		}
	}
	return false
}

// JSONLines returns the lines written so far that are JSON objects (the
// lines of [LogBuffer.JSONLogger]), decoded; with msg not empty only those
// whose "msg" is msg.
func (b *LogBuffer) JSONLines(msg string) []map[string]any {
	var out []map[string]any
	for line := range strings.Lines(b.String()) {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && (msg == "" || m["msg"] == msg) {
			out = append(out, m)
		}
	}
	return out
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// Logger returns a logger that writes text lines of level and above to b.
func (b *LogBuffer) Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: level}))
}

// JSONLogger returns a logger that writes JSON lines of level and above to b.
func (b *LogBuffer) JSONLogger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: level}))
}

// TestLogger returns a logger that writes text lines of every level to
// t.Log, so that they show with the test that logged them. It must not be
// used after the test ends.
func TestLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(TestWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestWriter sends each write to t.Log, without its final newline.
type TestWriter struct{ T testing.TB }

func (w TestWriter) Write(p []byte) (int, error) {
	w.T.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

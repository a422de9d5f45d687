package xds

import (
	"context"
	"fmt"
	"log/slog"
)

// cacheLogger writes the logs of go-control-plane's cache and server to
// slog under one fixed message, with their text as "detail". Their info
// lines are per-watch chatter and go to debug.
type cacheLogger struct{ log *slog.Logger }

func (l cacheLogger) Debugf(format string, args ...any) { l.logf(slog.LevelDebug, format, args) }
func (l cacheLogger) Infof(format string, args ...any)  { l.logf(slog.LevelDebug, format, args) }
func (l cacheLogger) Warnf(format string, args ...any)  { l.logf(slog.LevelWarn, format, args) }
func (l cacheLogger) Errorf(format string, args ...any) { l.logf(slog.LevelError, format, args) }

func (l cacheLogger) logf(level slog.Level, format string, args []any) {
	ctx := context.Background()
	if !l.log.Enabled(ctx, level) {
		return
	}
	l.log.Log(ctx, level, "go-control-plane", "detail", fmt.Sprintf(format, args...))
}

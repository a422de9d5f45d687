package bus

import (
	"context"
	"strconv"
	"time"
)

// HeaderPublished is when the change a value comes from was published by
// a provider, in Unix nanoseconds. A provider stamps it on every value it
// writes to the resources bucket ([WithPublished]); the translator copies
// the newest time of the changes an output was computed from onto the
// output ([WithPublishedFrom] of the change's context), so the xds service
// can measure how long a change took to reach an Envoy. Outputs of a
// resync, which no single change caused, carry none.
const HeaderPublished = "Gatewire-Published"

// WithPublished stamps a value with the time t of its publication
// ([HeaderPublished]).
func WithPublished(t time.Time) PutOption {
	return WithHeader(HeaderPublished, strconv.FormatInt(t.UnixNano(), 10))
}

// WithPublishedFrom stamps a value with the publication time that ctx
// carries ([ContextWithPublished], [Entry.Context]); it changes nothing
// when ctx carries none.
func WithPublishedFrom(ctx context.Context) PutOption {
	t, ok := PublishedFrom(ctx)
	if !ok {
		return func(*putOptions) {}
	}
	return WithPublished(t)
}

// Published is the publication time an entry carries in
// [HeaderPublished], if any.
func (e *Entry) Published() (time.Time, bool) {
	if e == nil {
		return time.Time{}, false
	}
	return ParsePublished(e.Header.Get(HeaderPublished))
}

// ParsePublished reads a value of [HeaderPublished].
func ParsePublished(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ns <= 0 {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

type publishedKey struct{}

// ContextWithPublished returns ctx carrying the publication time t, or
// the time ctx already carries when that one is newer: a context that
// gathers several changes keeps the newest.
func ContextWithPublished(ctx context.Context, t time.Time) context.Context {
	if old, ok := PublishedFrom(ctx); ok && old.After(t) {
		return ctx
	}
	return context.WithValue(ctx, publishedKey{}, t)
}

// PublishedFrom is the publication time ctx carries, if any.
func PublishedFrom(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(publishedKey{}).(time.Time)
	return t, ok
}

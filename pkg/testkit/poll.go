package testkit

import (
	"fmt"
	"testing"
	"time"
)

// Eventually calls cond until it returns true, and fails the test with
// "timed out waiting for <what>" when it has not within timeout. It polls
// every timeout/500, at least every 10ms and at most every 100ms.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyValue(t, timeout, what, func() (struct{}, bool) { return struct{}{}, cond() })
}

// EventuallyValue calls get until it returns true, and returns the value
// it returned with it. When get has not returned true within timeout the
// test fails, naming what and the last value.
func EventuallyValue[T any](t testing.TB, timeout time.Duration, what string, get func() (T, bool)) T {
	t.Helper()
	interval := min(max(timeout/500, 10*time.Millisecond), 100*time.Millisecond)
	deadline := time.Now().Add(timeout)
	for {
		v, ok := get()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s within %s (last: %s)", what, timeout, describe(v))
			return v
		}
		time.Sleep(interval)
	}
}

func describe(v any) string {
	if _, ok := v.(struct{}); ok {
		return "false"
	}
	return fmt.Sprintf("%v", v)
}

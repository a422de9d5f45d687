package conformance

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// klog starts its flush daemon when its package loads.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		// controller-runtime wraps the watch of a metadata informer in
		// watch.Filter, whose goroutine blocks for ever on a send when the
		// informer stops with an event in flight: one per stopped manager.
		goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop"),
	)
}

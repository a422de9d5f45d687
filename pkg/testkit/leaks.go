package testkit

import (
	"fmt"
	"os"

	"go.uber.org/goleak"
)

// IgnoreKlog is the goleak option of every test package that loads
// Kubernetes client code: klog starts its flush daemon when its package
// loads and never stops it. It is not a leak of the code under test.
func IgnoreKlog() goleak.Option {
	return goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1")
}

// IgnoreStoppedInformers is the goleak option of every test package that
// stops controller-runtime managers: controller-runtime wraps the watch of
// a metadata informer in watch.Filter, whose goroutine blocks for ever on a
// send when the informer stops with an event in flight, one per stopped
// manager. It is a leak of controller-runtime, not of gatewire.
func IgnoreStoppedInformers() goleak.Option {
	return goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop")
}

// TestingM is what goleak.VerifyTestMain runs.
type TestingM interface{ Run() int }

// After returns m with cleanup run once its tests are done and before
// goleak looks for goroutines: stopping a server the tests share, removing
// a folder. An error from cleanup is printed and fails the run.
func After(m TestingM, cleanup func() error) TestingM { return after{m, cleanup} }

type after struct {
	m       TestingM
	cleanup func() error
}

func (a after) Run() int {
	code := a.m.Run()
	if err := a.cleanup(); err != nil {
		fmt.Fprintln(os.Stderr, "after the tests:", err)
		code = max(code, 1)
	}
	return code
}

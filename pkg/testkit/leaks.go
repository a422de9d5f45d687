package testkit

import "go.uber.org/goleak"

// IgnoreKlog is the goleak option of every test package that loads
// Kubernetes client code: klog starts its flush daemon when its package
// loads and never stops it. It is not a leak of the code under test.
func IgnoreKlog() goleak.Option {
	return goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1")
}

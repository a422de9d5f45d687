package file_test

import (
	"strings"
	"testing"
)

// TestObjectTheAPIServerRefusesIsAProblem checks that an object the
// Kubernetes API server would refuse (package validate) is a problem of its
// file, at its field's line, and that the last good content stays published.
func TestObjectTheAPIServerRefusesIsAProblem(t *testing.T) {
	e := newEnv(t)
	e.write("gateway.yaml", gatewayDoc)
	e.start()
	good, goodRev := e.get(gatewayKey)

	e.write("gateway.yaml", strings.Replace(gatewayDoc, "port: 8080", "port: 0", 1))
	want := e.path("gateway.yaml") + ":10: Gateway default/quickstart: spec.listeners[0].port: Invalid value: 0: " +
		"spec.listeners[0].port in body should be greater than or equal to 1"
	e.eventually(contract, "the refused object is reported", func() bool { return strings.Contains(e.problemText(), want) })
	if !e.errorLogged(e.path("gateway.yaml"), 10, "spec.listeners[0].port") {
		t.Errorf("no error log line with path, line 10 and the field; logs: %v", e.logs.JSONLines(""))
	}
	if got, rev := e.get(gatewayKey); got == nil || rev != goodRev || string(got.Object) != string(good.Object) {
		t.Errorf("the last good Gateway was not kept: %v (revision %d, was %d)", got, rev, goodRev)
	}
	if !strings.Contains(string(good.Object), `"allowedRoutes":{"namespaces":{"from":"Same"}}`) {
		t.Errorf("the Gateway was published without the API server's defaults: %s", good.Object)
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/gatewaytest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// TestTranslateProgress reads a folder of route files with -progress and a
// short interval: it prints lines of progress on the standard error, reads
// every file (in parallel) and still validates them: a bad file fails it.
func TestTranslateProgress(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = time.Millisecond
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gateway.yaml", gatewaytest.GatewayClass()+gatewaytest.Gateway("bench", "eg"))
	const n = 40
	for i := range n {
		write(fmt.Sprintf("r-%03d.yaml", i), gatewaytest.TenantRoute("bench", "eg", i)+gatewaytest.TenantBackends("bench", i))
	}
	var stdout bytes.Buffer
	var stderr testkit.LogBuffer
	opts := translateOptions{inputs: inputs{dir}, controller: gatewayclass.DefaultControllerName, output: "status", format: "yaml", progress: true}
	if err := translate(context.Background(), opts, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("of %d files", n+1)) {
		t.Errorf("no progress line naming %d files on the standard error:\n%s", n+1, stderr.String())
	}
	if got := strings.Count(stdout.String(), "kind: HTTPRoute\nmetadata:"); got != n {
		t.Errorf("%d HTTPRoutes printed, want %d", got, n)
	}
	write("r-007.yaml", strings.Replace(gatewaytest.TenantRoute("bench", "eg", 7), "port: 80", "port: 0", 1))
	err := translate(context.Background(), opts, nil, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "r-007.yaml") {
		t.Errorf("a route with port 0 read in parallel: err = %v, want a problem naming r-007.yaml", err)
	}
}

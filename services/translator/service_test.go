package translator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/manifest"
	"github.com/gatewire/gatewire/pkg/testkit"
)

const serviceCase = "testdata/httproute/simple.in.yaml"

// Keys the translation of serviceCase writes.
var (
	gatewayKey     = bus.GatewayKey("default", "eg")
	gatewayStatus  = bus.StatusKey("Gateway", "default", "eg", "default", "eg")
	routeStatus    = bus.StatusKey("HTTPRoute", "default", "web", "default", "eg")
	classStatusKey = ClassStatusKey("gatewire")
)

func TestServicePublishesUpdatesAndRemoves(t *testing.T) {
	b := bustest.New(t)
	putYAML(t, b, serviceCase)
	s, _ := startService(t, b)
	waitReady(t, s)

	xds := waitFor(t, b, bus.XDS, gatewayKey, func(e *bus.Entry) bool { return e != nil }).Value.(*busv1.XdsSnapshot)
	if xds.GetNodeCluster() != "default/eg" || xds.GetSourceRevision() == 0 {
		t.Errorf("xds snapshot: node cluster %q, source revision %d; want default/eg and a revision", xds.GetNodeCluster(), xds.GetSourceRevision())
	}
	for _, k := range []struct {
		bucket bus.Bucket
		key    string
	}{{bus.IR, gatewayKey}, {bus.Infra, gatewayKey}, {bus.Status, gatewayStatus}, {bus.Status, routeStatus}, {bus.Status, classStatusKey}} {
		waitFor(t, b, k.bucket, k.key, func(e *bus.Entry) bool { return e != nil })
	}

	// A route change gives a new snapshot, computed from a newer revision.
	route := strings.Replace(routeYAML, "value: /", "value: /v2", 1)
	putYAMLString(t, b, route)
	next := waitFor(t, b, bus.XDS, gatewayKey, func(e *bus.Entry) bool {
		return e != nil && e.Value.(*busv1.XdsSnapshot).GetVersion() != xds.GetVersion()
	})
	if next.SourceRevision <= xds.GetSourceRevision() {
		t.Errorf("new snapshot has source revision %d, not newer than %d", next.SourceRevision, xds.GetSourceRevision())
	}
	ir := waitFor(t, b, bus.IR, gatewayKey, func(e *bus.Entry) bool {
		return e != nil && firstRoute(e.Value.(*irv1.Gateway)).GetMatch().GetPath().GetValue() == "/v2"
	})
	if ir.SourceRevision != next.SourceRevision {
		t.Errorf("ir source revision %d, xds %d: want the same", ir.SourceRevision, next.SourceRevision)
	}

	// Deleting the Gateway removes every output of it, and the statuses it gave.
	if err := b.Delete(context.Background(), bus.Resources, bus.ResourceKey("Gateway", "default", "eg")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		bucket bus.Bucket
		key    string
	}{{bus.IR, gatewayKey}, {bus.XDS, gatewayKey}, {bus.Infra, gatewayKey}, {bus.Status, gatewayStatus}, {bus.Status, routeStatus}} {
		waitFor(t, b, k.bucket, k.key, func(e *bus.Entry) bool { return e == nil })
	}
	waitFor(t, b, bus.Status, classStatusKey, func(e *bus.Entry) bool { return e != nil })
}

// A restarted translator finds its outputs on the bus: it rewrites none that
// are still right and removes those that have no gateway any more.
func TestServiceResyncsWithItsOutputs(t *testing.T) {
	b := bustest.New(t)
	putYAML(t, b, serviceCase)
	ctx := context.Background()
	orphan := bus.GatewayKey("gone", "gw")
	if _, err := b.Put(ctx, bus.IR, orphan, &irv1.Gateway{Namespace: "gone", Name: "gw"}, bus.WithSourceRevision(1)); err != nil {
		t.Fatal(err)
	}
	orphanStatus := bus.StatusKey("HTTPRoute", "gone", "r", "gone", "gw")
	if _, err := b.Put(ctx, bus.Status, orphanStatus, &busv1.Status{}, bus.WithSourceRevision(1)); err != nil {
		t.Fatal(err)
	}

	_, stop := startService(t, b)
	first := waitFor(t, b, bus.XDS, gatewayKey, func(e *bus.Entry) bool { return e != nil })
	waitFor(t, b, bus.IR, orphan, func(e *bus.Entry) bool { return e == nil })
	waitFor(t, b, bus.Status, orphanStatus, func(e *bus.Entry) bool { return e == nil })
	stop()

	s, _ := startService(t, b)
	waitReady(t, s)
	again, err := b.Get(ctx, bus.XDS, gatewayKey)
	if err != nil {
		t.Fatal(err)
	}
	if again.Revision != first.Revision {
		t.Errorf("restart rewrote an unchanged snapshot: KV revision %d, was %d", again.Revision, first.Revision)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []struct {
		cfg  Config
		want string
	}{
		{Config{Debounce: -time.Second, WriteTimeout: time.Second}, "GATEWIRE_TRANSLATOR_DEBOUNCE"},
		{Config{Debounce: time.Hour, WriteTimeout: time.Second}, "GATEWIRE_TRANSLATOR_DEBOUNCE"},
		{Config{Debounce: 0, WriteTimeout: 0}, "GATEWIRE_TRANSLATOR_WRITE_TIMEOUT"},
		{withConfig(func(c *Config) { c.ReplicaID = "a b" }), "GATEWIRE_TRANSLATOR_REPLICA_ID"},
		{withConfig(func(c *Config) { c.Heartbeat = 0 }), "GATEWIRE_TRANSLATOR_HEARTBEAT"},
		{withConfig(func(c *Config) { c.MemberTTL = c.Heartbeat }), "GATEWIRE_TRANSLATOR_MEMBER_TTL"},
		{withConfig(func(c *Config) { c.MemberTTL = time.Hour }), "GATEWIRE_TRANSLATOR_MEMBER_TTL"},
	}
	for _, c := range bad {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
}

func withConfig(change func(*Config)) Config {
	c := DefaultConfig()
	change(&c)
	return c
}

const routeYAML = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
  namespace: default
  generation: 4
spec:
  parentRefs:
  - name: eg
  hostnames:
  - www.example.com
  rules:
  - matches:
    - path:
        type: PathPrefix
        value: /
    backendRefs:
    - name: web
      port: 8080
`

// startService runs a translator over b until the returned function is
// called or the test ends.
func startService(t *testing.T, b *bus.Bus, opts ...Option) (*Service, func()) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Debounce = 5 * time.Millisecond
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := New(cfg, b, log, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s, runService(t, s)
}

// runService runs s until the returned function is called or the test
// ends; stopping waits for Run to return, which must return nil.
func runService(tb testing.TB, s *Service) (stop func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				tb.Errorf("Run returned %v", err)
			}
		})
	}
	tb.Cleanup(stop)
	return stop
}

func waitReady(t *testing.T, s *Service) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, "the translator to be ready", s.Ready)
}

func putYAML(t *testing.T, b *bus.Bus, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	putYAMLString(t, b, string(data))
}

func putYAMLString(t *testing.T, b *bus.Bus, y string) {
	t.Helper()
	rs, err := manifest.ReadResources(strings.NewReader(y), "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if _, err := b.Put(context.Background(), bus.Resources, bus.ResourceKey(r.Kind, r.Namespace, r.Name), r); err != nil {
			t.Fatal(err)
		}
	}
}

// waitFor polls key of bucket until ok accepts its entry (nil when the key
// has no value), and returns that entry.
func waitFor(t *testing.T, b *bus.Bus, bucket bus.Bucket, key string, ok func(*bus.Entry) bool) *bus.Entry {
	t.Helper()
	return testkit.EventuallyValue(t, 10*time.Second, fmt.Sprintf("%s %s as expected", bucket, key), func() (*bus.Entry, bool) {
		e, err := b.Get(context.Background(), bucket, key)
		if errors.Is(err, bus.ErrNotFound) {
			e, err = nil, nil
		}
		if err != nil {
			t.Fatalf("get %s %s: %v", bucket, key, err)
		}
		return e, ok(e)
	})
}

func firstRoute(gw *irv1.Gateway) *irv1.Route {
	for _, l := range gw.GetListeners() {
		for _, vh := range l.GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				return r
			}
		}
	}
	return nil
}

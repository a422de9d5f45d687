package natsauth_test

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/natsauth"
	"github.com/gatewire/gatewire/pkg/natsauth/natsauthtest"
	"github.com/gatewire/gatewire/pkg/service"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// roleBus opens the bus as role would: with its own user, creating only
// the buckets it owns (service.CreateOptions).
func roleBus(t *testing.T, s *natsauthtest.Server, role natsauth.Role) (*bus.Bus, *natsauthtest.Errors, error) {
	t.Helper()
	base := s.Base(t, role)
	nc, errs, err := natsauthtest.Connect(t, base, role)
	if err != nil {
		return nil, errs, err
	}
	opts := []bus.Option{bus.WithSystem(s.System)}
	if role == natsauth.Reader {
		opts = append(opts, bus.WithOpenOnly())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := bus.New(ctx, nc, append(opts, service.CreateOptions(base, string(role))...)...)
	return b, errs, err
}

// openAll opens a bus for every role, in the order a cluster might start
// them: the translator first (its first attempt waits for the provider's
// bucket), then the provider, then the others.
func openAll(t *testing.T, s *natsauthtest.Server) map[natsauth.Role]*bus.Bus {
	buses, errs := openBuses(t, s)
	t.Cleanup(func() {
		for role, e := range errs {
			if msg := e.Find("Violation"); msg != "" {
				t.Errorf("%s was refused something while doing its job: %s", role, msg)
			}
		}
	})
	return buses
}

// openBuses is openAll without the check, for attacks; it returns what
// the server answered each role too.
func openBuses(t *testing.T, s *natsauthtest.Server) (map[natsauth.Role]*bus.Bus, map[natsauth.Role]*natsauthtest.Errors) {
	t.Helper()
	if _, errs, err := roleBus(t, s, natsauth.Translator); err == nil {
		t.Fatal("the translator opened the bus before the provider created the resources bucket")
	} else if msg := errs.Find("Permissions Violation"); msg != "" {
		t.Fatalf("the translator's first attempt hit a permission: %s", msg)
	}
	buses := map[natsauth.Role]*bus.Bus{}
	answers := map[natsauth.Role]*natsauthtest.Errors{}
	for _, role := range []natsauth.Role{natsauth.Provider, natsauth.Translator, natsauth.XDS, natsauth.Infra, natsauth.Reader} {
		b, errs, err := roleBus(t, s, role)
		if err != nil {
			t.Fatalf("%s: open the bus: %v (server said: %s)", role, err, errs.Find("Violation"))
		}
		buses[role], answers[role] = b, errs
	}
	return buses, answers
}

func resource(name string, size int) *busv1.Resource {
	obj := make([]byte, size)
	_, _ = rand.Read(obj) // random: zstd cannot shrink it under the payload limit
	return &busv1.Resource{Kind: "HTTPRoute", Namespace: "shop", Name: name, Object: obj}
}

// next waits for the next non-nil entry of w.
func next(t *testing.T, w *bus.Watcher) *bus.Entry {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				t.Fatal("watch ended")
			}
			if e != nil {
				return e
			}
		case <-timeout:
			t.Fatal("no entry within 10s")
		}
	}
}

// must returns v, failing the test with what when err is set:
// must(b.Get(...))(t, "what it does").
func must[T any](v T, err error) func(t *testing.T, what string) T {
	return func(t *testing.T, what string) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

// TestEveryRoleDoesItsJob runs, against a server with gatewire's
// authorization and TLS with client certificates, what each service does
// with the bus: every read, write, watch and listing of its role, large
// values through the object store included. Any permission the server
// refuses fails the test.
func TestEveryRoleDoesItsJob(t *testing.T) {
	s := natsauthtest.Start(t, natsauthtest.Options{TLS: true, VerifyClients: true})
	buses := openAll(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	provider, translator, xds, infra, reader := buses[natsauth.Provider], buses[natsauth.Translator], buses[natsauth.XDS], buses[natsauth.Infra], buses[natsauth.Reader]
	large := int(provider.Conn().MaxPayload()) * 2

	// provider: resources in and out, the status it writes back.
	statusWatch := must(provider.Watch(ctx, bus.Status, ">"))(t, "provider watches status")
	defer statusWatch.Stop()
	must(provider.Put(ctx, bus.Resources, bus.ResourceKey("HTTPRoute", "shop", "small"), resource("small", 100)))(t, "provider puts a resource")
	largeRoute := resource("large", large)
	must(provider.Put(ctx, bus.Resources, bus.ResourceKey("HTTPRoute", "shop", "large"), largeRoute))(t, "provider puts a large resource")
	must(provider.Keys(ctx, bus.Resources, ">"))(t, "provider lists resources")
	// A resync publishes the same large value again: the object store
	// replaces the object's chunks.
	must(provider.Put(ctx, bus.Resources, bus.ResourceKey("HTTPRoute", "shop", "large"), largeRoute))(t, "provider puts the large resource again")
	rw := must(provider.Watch(ctx, bus.Resources, ">"))(t, "provider watches resources")
	for range 2 {
		if e := next(t, rw); e.Err != nil || e.Value == nil {
			t.Fatalf("provider reads its resource %s: %v", e.Key, e.Err)
		}
	}
	rw.Stop()

	// translator: reads resources (the large one from the object store),
	// writes every output with compare-and-set, follows members.
	tw := must(translator.Watch(ctx, bus.Resources, ">"))(t, "translator watches resources")
	for range 2 {
		if e := next(t, tw); e.Err != nil || e.Value == nil {
			t.Fatalf("translator reads %s: %v", e.Key, e.Err)
		}
	}
	tw.Stop()
	for _, b := range []bus.Bucket{bus.IR, bus.XDS, bus.Infra} {
		hw := must(translator.Watch(ctx, b, ">", bus.HeadersOnly()))(t, "translator watches "+string(b))
		rev := must(translator.Put(ctx, b, "shop.edge", resource("out", 10), bus.WithSourceRevision(7)))(t, "translator writes "+string(b))
		must(translator.Put(ctx, b, "shop.edge", resource("out", 10), bus.WithRevision(rev)))(t, "translator compare-and-sets "+string(b))
		next(t, hw)
		hw.Stop()
	}
	sw := must(translator.Watch(ctx, bus.Status, ">", bus.HeadersOnly()))(t, "translator watches status")
	sw.Stop()
	must(translator.Put(ctx, bus.XDS, "shop.big", resource("big", large), bus.WithSourceRevision(8)))(t, "translator writes a large xds value")
	// A newer large value replaces it: the old object is deleted.
	must(translator.Put(ctx, bus.XDS, "shop.big", resource("big", large), bus.WithSourceRevision(9)))(t, "translator replaces a large xds value")
	statusKey := bus.StatusKey("HTTPRoute", "shop", "small", "shop", "edge")
	must(translator.Put(ctx, bus.Status, statusKey, &busv1.Status{}, bus.WithSourceRevision(7)))(t, "translator writes status")
	if err := translator.Delete(ctx, bus.IR, "shop.edge", bus.WithSourceRevision(9)); err != nil {
		t.Fatalf("translator deletes ir: %v", err)
	}
	mw := must(translator.Watch(ctx, bus.Members, "translator.*"))(t, "translator watches members")
	must(translator.Put(ctx, bus.Members, bus.MemberKey("t1"), &busv1.Member{}))(t, "translator heartbeats")
	next(t, mw)
	mw.Stop()
	if err := translator.Delete(ctx, bus.Members, bus.MemberKey("t1")); err != nil {
		t.Fatal(err)
	}
	if e := next(t, statusWatch); e.Key != statusKey {
		t.Fatalf("provider saw status %s", e.Key)
	}

	// xds: the xds bucket (the large value too), its own status entries.
	xw := must(xds.Watch(ctx, bus.XDS, "shop.>"))(t, "xds watches xds")
	for range 2 {
		if e := next(t, xw); e.Err != nil {
			t.Fatalf("xds reads %s: %v", e.Key, e.Err)
		}
	}
	xw.Stop()
	if e := must(xds.Get(ctx, bus.XDS, "shop.big"))(t, "xds gets a large value"); !proto.Equal(e.Value, resource("big", 0)) && e.Value == nil {
		t.Fatal("xds read no value")
	}
	own := bus.DataPlaneStatusKey("shop", "edge", "xds-0")
	must(xds.Put(ctx, bus.Status, own, &busv1.Status{}))(t, "xds writes its status")
	if keys := must(xds.Keys(ctx, bus.Status, bus.DataPlaneStatusKey("*", "*", "xds-0")))(t, "xds lists its status"); len(keys) != 1 {
		t.Errorf("xds lists %v", keys)
	}
	must(xds.Get(ctx, bus.Status, own))(t, "xds reads its status")
	if err := xds.Delete(ctx, bus.Status, own); err != nil {
		t.Fatalf("xds deletes its status: %v", err)
	}

	// infra: the infra bucket, its own status entries.
	iw := must(infra.Watch(ctx, bus.Infra, ">"))(t, "infra watches infra")
	next(t, iw)
	iw.Stop()
	must(infra.Keys(ctx, bus.Infra, ">"))(t, "infra lists infra")
	infraKey := bus.StatusKey("Gateway", "shop", "edge", bus.Infrastructure, bus.Infrastructure)
	must(infra.Put(ctx, bus.Status, infraKey, &busv1.Status{}))(t, "infra writes its status")
	must(infra.Keys(ctx, bus.Status, bus.StatusKey("Gateway", "*", "*", bus.Infrastructure, bus.Infrastructure)))(t, "infra lists its status")
	if err := infra.Delete(ctx, bus.Status, infraKey); err != nil {
		t.Fatalf("infra deletes its status: %v", err)
	}

	// reader: what gatewire tap and status do, on every bucket: watch
	// through the initial sync, list the keys, get each value.
	must(translator.Put(ctx, bus.Members, bus.MemberKey("t2"), &busv1.Member{}))(t, "translator heartbeats")
	must(xds.Put(ctx, bus.Status, own, &busv1.Status{}))(t, "xds writes its status")
	must(translator.Put(ctx, bus.IR, "shop.other", resource("ir", 10), bus.WithSourceRevision(9)))(t, "translator writes ir")
	must(xds.Put(ctx, bus.Proxies, "shop.edge.xds-0.1", &busv1.ProxyStatus{}))(t, "xds writes what a stream holds")
	for _, b := range bus.Buckets {
		w := must(reader.Watch(ctx, b, ">"))(t, "reader watches "+string(b))
		for e := range w.Updates() {
			if e == nil {
				break
			}
		}
		w.Stop()
		keys := must(reader.Keys(ctx, b, ">"))(t, "reader lists "+string(b))
		if len(keys) == 0 {
			t.Fatalf("the reader sees no key in %s", b)
		}
		for _, k := range keys {
			must(reader.Get(ctx, b, k))(t, "reader gets "+string(b)+" "+k)
		}
	}
	if e := must(reader.Get(ctx, bus.Resources, bus.ResourceKey("HTTPRoute", "shop", "large")))(t, "reader gets a large value"); e.Value == nil {
		t.Fatal("reader read no value")
	}
	if _, err := reader.Get(ctx, bus.IR, "shop.edge"); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("reader gets a deleted key: %v", err)
	}
}

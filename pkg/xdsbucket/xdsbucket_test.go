package xdsbucket_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// message marshals fields by hand, in field order, as a deterministic
// marshaller would: (number, bytes) pairs, or a varint for ignore_port.
func message(name string, vhosts [][]byte, extra uint64) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, name)
	for _, v := range vhosts {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, v)
	}
	if extra != 0 {
		b = protowire.AppendTag(b, 14, protowire.VarintType)
		b = protowire.AppendVarint(b, extra)
	}
	return b
}

func vhost(name string) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	return protowire.AppendString(b, name)
}

// TestSplitJoinRoute checks that a route configuration split into its
// shell and virtual hosts joins back into the same bytes.
func TestSplitJoinRoute(t *testing.T) {
	rc := message("http-80", [][]byte{vhost("a.example.com"), vhost("b.example.com"), vhost("*")}, 1)
	shell, vhs, err := xdsbucket.SplitRoute(rc)
	if err != nil {
		t.Fatal(err)
	}
	if want := message("http-80", nil, 1); !bytes.Equal(shell, want) {
		t.Fatalf("shell = %x, want %x", shell, want)
	}
	var res []*busv1.XdsResource
	for i, v := range vhs {
		res = append(res, &busv1.XdsResource{Value: v, Order: string(rune('a' + i))})
	}
	if got := xdsbucket.JoinRoute(shell, res); !bytes.Equal(got, rc) {
		t.Fatalf("joined = %x, want %x", got, rc)
	}
}

// gateway is a small gateway's resources: a listener, a route
// configuration of two virtual hosts, a cluster and its endpoints.
func gateway(edit string) []*busv1.XdsResource {
	return []*busv1.XdsResource{
		{TypeUrl: xdsbucket.ListenerType, Name: "http-80", Value: []byte("listener")},
		{TypeUrl: xdsbucket.RouteType, Name: "http-80", Value: message("http-80", nil, 1)},
		{TypeUrl: xdsbucket.VirtualHostType, Name: "a.example.com", RouteConfiguration: "http-80", Order: "0a.example.com", Value: vhost("a.example.com" + edit)},
		{TypeUrl: xdsbucket.VirtualHostType, Name: "*", RouteConfiguration: "http-80", Order: "1", Value: vhost("*")},
		{TypeUrl: xdsbucket.ClusterType, Name: "default/backend/80", Value: []byte("cluster")},
		{TypeUrl: xdsbucket.EndpointType, Name: "default/backend/80", Value: []byte("endpoints")},
		{TypeUrl: xdsbucket.ListenerType, Name: "a.example.com", Proxyless: true, Value: []byte("api")},
	}
}

// write puts the resources of set that changed from prev, purges those it
// no longer has, then puts its commit.
func write(t *testing.T, b *bus.Bus, gw string, prev, set *xdsbucket.Set, rev uint64) *busv1.XdsSnapshot {
	t.Helper()
	ctx := context.Background()
	for _, suffix := range set.Suffixes() {
		r := set.Get(suffix)
		if old := prev.Get(suffix); old != nil && old.GetVersion() == r.GetVersion() {
			continue
		}
		if _, err := b.Put(ctx, bus.XDS, gw+"."+suffix, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, suffix := range prev.Suffixes() {
		if set.Get(suffix) == nil {
			if err := b.Delete(ctx, bus.XDS, gw+"."+suffix); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := set.Commit("default/gw", rev)
	if _, err := b.Put(ctx, bus.XDS, gw, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func setOf(t *testing.T, rs []*busv1.XdsResource) *xdsbucket.Set {
	t.Helper()
	s := xdsbucket.NewSet()
	for _, r := range rs {
		if _, _, err := s.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestStageFollowsCommits writes a gateway, edits one virtual host and
// removes the cluster, and checks that a Stage following the bucket
// assembles each commit into the snapshot written, reusing what did not
// change, and that Read gives the last one.
func TestStageFollowsCommits(t *testing.T) {
	b := bustest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := b.Watch(ctx, bus.XDS, ">")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if e := <-w.Updates(); e != nil {
		t.Fatalf("first entry = %v, want the end of the initial sync", e)
	}
	gw := bus.GatewayKey("default", "gw")
	// A watcher may miss a value overwritten before it was delivered (the
	// bucket keeps one per key), so v2 is written once v1 is assembled.
	stage := xdsbucket.NewStage(nil)
	next := func() *busv1.XdsSnapshot {
		t.Helper()
		for {
			e, ok := <-w.Updates()
			if !ok || e == nil {
				t.Fatal("the watch ended before a snapshot was assembled")
			}
			r := stage.Apply(e)
			if r.Err != nil {
				t.Fatalf("%s: %v", e.Key, r.Err)
			}
			if r.Snapshot != nil {
				return r.Snapshot
			}
		}
	}
	v1 := setOf(t, gateway(""))
	c1 := write(t, b, gw, xdsbucket.NewSet(), v1, 1)
	snaps := []*busv1.XdsSnapshot{next()}
	v2rs := gateway("-edited")
	v2rs = append(v2rs[:4], v2rs[6:]...) // no cluster, no endpoints
	v2 := setOf(t, v2rs)
	c2 := write(t, b, gw, v1, v2, 2)
	snaps = append(snaps, next())
	if snaps[0].GetVersion() != c1.GetVersion() || snaps[1].GetVersion() != c2.GetVersion() {
		t.Fatalf("versions %s, %s; want %s, %s", snaps[0].GetVersion(), snaps[1].GetVersion(), c1.GetVersion(), c2.GetVersion())
	}
	rc := typed(snaps[1], xdsbucket.RouteType).GetResources()[0].GetValue()
	if want := message("http-80", [][]byte{vhost("a.example.com-edited"), vhost("*")}, 1); !bytes.Equal(rc, want) {
		t.Fatalf("route configuration = %x, want %x", rc, want)
	}
	if typed(snaps[1], xdsbucket.ClusterType) != nil {
		t.Fatal("the removed cluster is still served")
	}
	if typed(snaps[0], xdsbucket.ListenerType) != typed(snaps[1], xdsbucket.ListenerType) {
		t.Fatal("unchanged listeners were assembled again")
	}
	if n := len(snaps[1].GetProxylessListeners()); n != 1 {
		t.Fatalf("%d proxyless listeners, want 1", n)
	}
	got, err := xdsbucket.Read(ctx, b, gw)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetVersion() != c2.GetVersion() {
		t.Fatalf("Read: version %s, want %s", got.GetVersion(), c2.GetVersion())
	}
}

func typed(s *busv1.XdsSnapshot, url string) *busv1.TypedResources {
	for _, t := range s.GetResources() {
		if t.GetTypeUrl() == url {
			return t
		}
	}
	return nil
}

// TestStageRefusesForeignValues checks that a commit is not assembled
// while a key holds a value its writer did not write, and is once the
// writer repairs it.
func TestStageRefusesForeignValues(t *testing.T) {
	gw := bus.GatewayKey("default", "gw")
	set := setOf(t, gateway(""))
	c := set.Commit("default/gw", 1)
	stage := xdsbucket.NewStage(nil)
	rev := uint64(0)
	apply := func(key string, v any) xdsbucket.Result {
		rev++
		e := &bus.Entry{Bucket: bus.XDS, Key: key, Revision: rev}
		if v == nil {
			e.Op = bus.OpDelete
		} else if err, ok := v.(error); ok {
			e.Err = err
		} else {
			e.Value = v.(*busv1.XdsResource)
		}
		return stage.Apply(e)
	}
	for _, suffix := range set.Suffixes() {
		r := set.Get(suffix)
		if r.GetTypeUrl() == xdsbucket.ClusterType {
			apply(gw+"."+suffix, errors.New("garbage"))
			continue
		}
		apply(gw+"."+suffix, r)
	}
	rev++
	r := stage.Apply(&bus.Entry{Bucket: bus.XDS, Key: gw, Revision: rev, Value: c})
	if r.Snapshot != nil || !errors.Is(r.Err, xdsbucket.ErrIncomplete) {
		t.Fatalf("commit with a foreign value: %+v, want ErrIncomplete", r)
	}
	for _, suffix := range set.Suffixes() {
		if set.Get(suffix).GetTypeUrl() == xdsbucket.ClusterType {
			if r := apply(gw+"."+suffix, set.Get(suffix)); r.Snapshot == nil {
				t.Fatalf("repaired value: %+v, want the snapshot", r)
			}
		}
	}
	forged := &busv1.XdsResource{TypeUrl: xdsbucket.ClusterType, Name: "x", Value: []byte("v"), Version: "00"}
	if r := apply(gw+"."+xdsbucket.Suffix(xdsbucket.KindCluster, forged), forged); r.Err == nil {
		t.Fatal("a value whose version is not its hash was taken")
	}
}

// TestStageRefusesInlineCommits checks that a commit holding its
// resources inline, as a whole snapshot in memory does, is refused rather
// than assembled from the keys it never wrote (none: an empty snapshot).
func TestStageRefusesInlineCommits(t *testing.T) {
	gw := bus.GatewayKey("default", "gw")
	stage := xdsbucket.NewStage(nil)
	whole := &busv1.XdsSnapshot{NodeCluster: "default/gw", Version: "v1", Resources: []*busv1.TypedResources{{
		TypeUrl: xdsbucket.ClusterType, Resources: []*anypb.Any{{TypeUrl: xdsbucket.ClusterType, Value: []byte("cluster")}},
	}}}
	r := stage.Apply(&bus.Entry{Bucket: bus.XDS, Key: gw, Revision: 1, Value: whole})
	if r.Snapshot != nil || r.Err == nil || !strings.Contains(r.Err.Error(), "inline") {
		t.Fatalf("inline commit: %+v, want an error saying the resources are inline", r)
	}
	proxyless := &busv1.XdsSnapshot{NodeCluster: "default/gw", Version: "v2",
		ProxylessListeners: []*anypb.Any{{TypeUrl: xdsbucket.ListenerType, Value: []byte("api")}}}
	if r := stage.Apply(&bus.Entry{Bucket: bus.XDS, Key: gw, Revision: 2, Value: proxyless}); r.Snapshot != nil || r.Err == nil {
		t.Fatalf("commit with inline proxyless listeners: %+v, want an error", r)
	}
}

// TestReserveKeepsResources checks that Reserve prepares an empty set and
// leaves a set that holds resources as it is.
func TestReserveKeepsResources(t *testing.T) {
	s := xdsbucket.NewSet()
	s.Reserve(100)
	a := &busv1.XdsResource{TypeUrl: xdsbucket.ClusterType, Name: "a", Value: []byte("a")}
	if _, changed, err := s.Put(a); err != nil || !changed {
		t.Fatalf("Put after Reserve: changed %v, %v", changed, err)
	}
	s.Reserve(100)
	if s.Len() != 1 {
		t.Fatalf("Reserve on a set of one resource left %d", s.Len())
	}
	if _, changed, err := s.Put(a); err != nil || changed {
		t.Fatalf("the same resource again: changed %v, %v", changed, err)
	}
}

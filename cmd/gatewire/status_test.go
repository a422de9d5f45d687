package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// TestStatus fills the buckets as the services would for two gateways and
// checks what `gatewire status` prints of them.
func TestStatus(t *testing.T) {
	ctx := context.Background()
	b := bustest.New(t)
	now := time.Now()
	put := func(bucket bus.Bucket, key string, msg proto.Message) {
		t.Helper()
		if _, err := b.Put(ctx, bucket, key, msg); err != nil {
			t.Fatal(err)
		}
	}
	put(bus.Status, bus.StatusKey("Gateway", "default", "eg", "default", "eg"), &busv1.Status{
		Conditions: []*busv1.Condition{
			{Type: "Accepted", Status: "True", Reason: "Accepted", Message: "Gateway is accepted"},
			{Type: "Programmed", Status: "True", Reason: "Programmed", Message: "Gateway is programmed"},
		},
		Listeners: []*busv1.ListenerStatus{{Name: "http", AttachedRoutes: 3, Conditions: []*busv1.Condition{
			{Type: "Accepted", Status: "True"}, {Type: "ResolvedRefs", Status: "False", Reason: "InvalidCertificateRef", Message: "no such Secret"},
		}}},
	})
	put(bus.Status, bus.DataPlaneStatusKey("default", "eg", "xds-a"), &busv1.Status{Conditions: []*busv1.Condition{
		{Type: "Programmed", Status: "False", Reason: "Invalid", Message: "an Envoy rejected version v1"},
	}})
	put(bus.Status, bus.StatusKey("Gateway", "default", "eg", bus.Infrastructure, bus.Infrastructure),
		&busv1.Status{Addresses: []string{"10.0.0.7"}})
	cluster := func(name string) *anypb.Any {
		value := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), name) // Cluster.name
		return &anypb.Any{TypeUrl: xdsbucket.ClusterType, Value: value}
	}
	if _, err := xdsbucket.Write(ctx, b, bus.GatewayKey("default", "eg"), &busv1.XdsSnapshot{NodeCluster: "default/eg", Version: "v1", SourceRevision: 7,
		Resources: []*busv1.TypedResources{{TypeUrl: xdsbucket.ClusterType, Resources: []*anypb.Any{cluster("a"), cluster("b")}}}}); err != nil {
		t.Fatal(err)
	}
	put(bus.Status, bus.StatusKey("Gateway", "other", "gw", "other", "gw"), &busv1.Status{Conditions: []*busv1.Condition{
		{Type: "Accepted", Status: "False", Reason: "InvalidParameters", Message: "parametersRef is not supported"},
	}})
	put(bus.Members, bus.MemberKey("translator-1"), &busv1.Member{Id: "translator-1", HeartbeatUnixNano: now.Add(-2 * time.Second).UnixNano()})

	var out bytes.Buffer
	if err := printStatus(ctx, b, "", now, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"gateway default/eg\n",
		"Programmed  True", "listener http  3 routes  Accepted=True, ResolvedRefs=False (InvalidCertificateRef: no such Secret)",
		"xds  version v1  source revision 7  2 Cluster; 0 proxyless listeners",
		"addresses  10.0.0.7",
		"envoys via xds-a  Programmed=False (Invalid: an Envoy rejected version v1)",
		"gateway other/gw\n", "Accepted  False  InvalidParameters", "xds  no snapshot",
		"translators  1", "translator-1  heartbeat 2s ago",
	} {
		if !strings.Contains(collapse(out.String()), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if err := printStatus(ctx, b, "other/gw", now, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "default/eg") || !strings.Contains(out.String(), "other/gw") {
		t.Errorf("status of other/gw printed:\n%s", out.String())
	}
	err := printStatus(ctx, b, "nope/gw", now, &out)
	if err == nil || !strings.Contains(err.Error(), "nope/gw") || !strings.Contains(err.Error(), "default/eg") {
		t.Errorf("status of an unknown gateway: %v, want an error naming it and the known ones", err)
	}
}

// collapse turns the runs of spaces tabwriter pads columns with into two
// spaces.
func collapse(s string) string {
	for strings.Contains(s, "   ") {
		s = strings.ReplaceAll(s, "   ", "  ")
	}
	return s
}

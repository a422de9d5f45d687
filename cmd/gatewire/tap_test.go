package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/pkg/testkit"
	"github.com/gatewire/gatewire/pkg/xdsbucket"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// fillForTap writes a value of each kind tap decodes.
func fillForTap(t *testing.T, b *bus.Bus) {
	t.Helper()
	ctx := context.Background()
	vh, err := proto.Marshal(&routev3.VirtualHost{Name: "www", Domains: []string{"www.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		bucket bus.Bucket
		key    string
		msg    proto.Message
	}{
		{bus.Resources, bus.ResourceKey("HTTPRoute", "default", "web"), &busv1.Resource{Kind: "HTTPRoute", Namespace: "default", Name: "web",
			Object: []byte(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"HTTPRoute","spec":{"hostnames":["www.example.com"]}}`)}},
		{bus.Resources, bus.SyncKey("file"), &busv1.SyncMark{Source: "file", State: busv1.SyncMark_STATE_SYNCED, Provider: "p-1", Revision: 7, Objects: 3,
			StartedUnixNano: time.Now().UnixNano()}},
		{bus.Members, bus.MemberKey("t-1"), &busv1.Member{Id: "t-1", StartedUnixNano: 1, HeartbeatUnixNano: time.Now().UnixNano()}},
		{bus.XDS, "default.eg.vh.d3d3", &busv1.XdsResource{TypeUrl: xdsbucket.VirtualHostType, Name: "www", RouteConfiguration: "http-80", Value: vh}},
	} {
		if _, err := b.Put(ctx, v.bucket, v.key, v.msg, bus.WithHeader("Gatewire-Writer", "test")); err != nil {
			t.Fatal(err)
		}
	}
}

// tapUntil runs tap with args until its output holds every one of want,
// and returns the output.
func tapUntil(t *testing.T, b *bus.Bus, args []string, want ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out testkit.LogBuffer
	done := make(chan error, 1)
	go func() {
		done <- runTap(ctx, append([]string{"-nats-url", b.Conn().ConnectedUrl(), "-system", b.System()}, args...), &out)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("tap: %v", err)
		}
	}()
	return testkit.EventuallyValue(t, 10*time.Second, fmt.Sprintf("tap %q to print %q", args, want), func() (string, bool) {
		s := out.String()
		for _, w := range want {
			if !strings.Contains(s, w) {
				return s, false
			}
		}
		return s, true
	})
}

// TestTapText checks the output for people: decoded objects, readable
// sync marks, heartbeats only when asked for.
func TestTapText(t *testing.T) {
	b := bustest.New(t)
	fillForTap(t, b)
	out := tapUntil(t, b, nil,
		"resources put HTTPRoute.default.web  revision 1  by test  gatewire.bus.v1.Resource\n",
		"    apiVersion: gateway.networking.k8s.io/v1\n",
		"SYNCED: file provider p-1 wrote 3 objects, up to revision 7",
		"xds put default.eg.vh.d3d3",
		"    - www.example.com\n")
	if strings.Contains(out, "members") {
		t.Errorf("heartbeats printed without -members:\n%s", out)
	}
	tapUntil(t, b, []string{"-members"}, "members put translator.t-1", "heartbeat ")
	tapUntil(t, b, []string{"members"}, "members put translator.t-1")
}

// TestTapJSON checks the output for machines: one JSON object a line,
// with the Kubernetes object and the Envoy resource as objects.
func TestTapJSON(t *testing.T) {
	b := bustest.New(t)
	fillForTap(t, b)
	out := tapUntil(t, b, []string{"-o", "json", "-all"}, `"key":"HTTPRoute.default.web"`, `"key":"Sync._.file"`,
		`"key":"translator.t-1"`, `"key":"default.eg.vh.d3d3"`)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l struct {
			Key     string            `json:"key"`
			Headers map[string]string `json:"headers"`
			Value   map[string]any    `json:"value"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if l.Headers["Gatewire-Writer"] != "test" {
			t.Errorf("%s: headers %v, want Gatewire-Writer test", l.Key, l.Headers)
		}
		switch l.Key {
		case "HTTPRoute.default.web":
			if obj, ok := l.Value["object"].(map[string]any); !ok || obj["kind"] != "HTTPRoute" {
				t.Errorf("the resource's object is %T %v, want the decoded object", l.Value["object"], l.Value["object"])
			}
		case "default.eg.vh.d3d3":
			if vh, ok := l.Value["value"].(map[string]any); !ok || vh["name"] != "www" {
				t.Errorf("the virtual host is %v, want it decoded", l.Value["value"])
			}
		}
	}
}

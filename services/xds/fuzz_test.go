package xds

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"go.opentelemetry.io/otel/metric/noop"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/gatewire/gatewire/services/xds/xdstest"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite the seed corpus of FuzzDiscoveryRequest")

// FuzzDiscoveryRequest drives one stream's state machine with a sequence
// of requests: the input's first byte picks state of the world (even) or
// delta (odd), the rest is requests, each a 2-byte big-endian length and
// a marshalled DiscoveryRequest or DeltaDiscoveryRequest. After every
// request the stream sends what is due. Whatever the requests, nothing
// panics, every response decodes and carries a served type at the
// version the snapshot serves, no type has two responses unanswered, and
// the stream's status can be read.
func FuzzDiscoveryRequest(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		s, snap := fuzzService(t)
		sink := &recordingStream{t: t, delta: data[0]%2 == 1, snap: snap}
		st := s.newStream(sink, sink.delta, -1)
		s.store.add(st)
		defer s.store.remove(st)
		for b := data[1:]; len(b) >= 2; {
			n := int(binary.BigEndian.Uint16(b))
			b = b[2:]
			if n > len(b) {
				n = len(b)
			}
			msg := b[:n]
			b = b[n:]
			if err := fuzzStep(s, st, sink.delta, msg); err != nil {
				return // the stream would end: the server refused the request
			}
		}
		_ = s.Streams()
	})
}

// fuzzStep applies one request and sends what is due.
func fuzzStep(s *Service, st *stream, delta bool, msg []byte) error {
	if delta {
		req := &discovery.DeltaDiscoveryRequest{}
		if proto.Unmarshal(msg, req) != nil {
			return nil
		}
		if err := s.handleDelta(st, req); err != nil {
			return err
		}
		return s.pushDelta(st)
	}
	req := &discovery.DiscoveryRequest{}
	if proto.Unmarshal(msg, req) != nil {
		return nil
	}
	if err := s.handleSotw(st, req); err != nil {
		return err
	}
	return s.pushSotw(st)
}

// fuzzService is a Service without a server, with the sample snapshot
// (and its proxyless listeners) of ns/gw served.
func fuzzService(t *testing.T) (*Service, *snapshot) {
	log := slog.New(slog.DiscardHandler)
	st := newStore()
	m, err := newMetrics(noop.NewMeterProvider().Meter(meterName), st)
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{log: log, store: st, metrics: m, dataPlane: newDataPlane(nil, log, "fuzz", servedVersion(st))}
	x := proxylessSample(t, "v1", "a.example")
	envoy, proxyless, err := buildSnapshots(xdstest.WithTypeVersions(x), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.set(gateway, envoy, proxyless)
	return s, envoy
}

// recordingStream is a grpc.ServerStream that checks what is sent on it.
type recordingStream struct {
	t     *testing.T
	delta bool
	snap  *snapshot
}

func (r *recordingStream) SetHeader(metadata.MD) error  { return nil }
func (r *recordingStream) SendHeader(metadata.MD) error { return nil }
func (r *recordingStream) SetTrailer(metadata.MD)       {}
func (r *recordingStream) Context() context.Context     { return context.Background() }
func (r *recordingStream) RecvMsg(any) error            { return nil }

func (r *recordingStream) SendMsg(m any) error {
	e, ok := m.(*encoded)
	if !ok {
		r.t.Fatalf("sent a %T", m)
	}
	b := e.bufs.Materialize()
	var url, version string
	if r.delta {
		resp := &discovery.DeltaDiscoveryResponse{}
		if err := proto.Unmarshal(b, resp); err != nil {
			r.t.Fatalf("delta response does not decode: %v", err)
		}
		url, version = resp.GetTypeUrl(), resp.GetSystemVersionInfo()
	} else {
		resp := &discovery.DiscoveryResponse{}
		if err := proto.Unmarshal(b, resp); err != nil {
			r.t.Fatalf("response does not decode: %v", err)
		}
		url, version = resp.GetTypeUrl(), resp.GetVersionInfo()
	}
	i := typeIndex(url)
	if i < 0 {
		r.t.Fatalf("response of type %q", url)
	}
	if i != typeListener && version != r.snap.types[i].version {
		r.t.Fatalf("%s response at %q, want %q", url, version, r.snap.types[i].version)
	}
	return nil
}

var _ grpc.ServerStream = (*recordingStream)(nil)

// fuzzSeeds are request sequences an Envoy, a gRPC client and a confused
// client send.
func fuzzSeeds() [][]byte {
	n := &core.Node{Id: "envoy-1", Cluster: gateway}
	seq := func(mode byte, msgs ...proto.Message) []byte {
		out := []byte{mode}
		for _, m := range msgs {
			b, err := proto.Marshal(m)
			if err != nil {
				panic(err)
			}
			out = binary.BigEndian.AppendUint16(out, uint16(len(b)))
			out = append(out, b...)
		}
		return out
	}
	req := func(url, nonce, version string, names ...string) *discovery.DiscoveryRequest {
		return &discovery.DiscoveryRequest{TypeUrl: url, ResponseNonce: nonce, VersionInfo: version, ResourceNames: names}
	}
	first := req(typeURLs[typeCluster], "", "")
	first.Node = n
	nack := req(typeURLs[typeCluster], "1", "")
	nack.ErrorDetail = &rpcstatus.Status{Code: 3, Message: "bad cluster"}
	proxyless := req(typeURLs[typeListener], "", "", "a.example", "missing.example")
	proxyless.Node = proxylessNodeOf(gateway)
	deltaFirst := &discovery.DeltaDiscoveryRequest{Node: n, TypeUrl: typeURLs[typeEndpoint],
		ResourceNamesSubscribe: []string{"backend", "other"}, InitialResourceVersions: map[string]string{"backend": "x"}}
	return [][]byte{
		seq(0, first, req(typeURLs[typeCluster], "1", "v1"), req(typeURLs[typeEndpoint], "", "", "backend", "other"),
			req(typeURLs[typeListener], "", ""), req(typeURLs[typeRoute], "", "", "http-10080")),
		seq(0, first, nack, req(typeURLs[typeCluster], "1", "")),
		seq(0, proxyless, req(typeURLs[typeListener], "1", "v1", "a.example")),
		seq(0, req(typeURLs[typeCluster], "", "")),
		seq(0, first, req("type.googleapis.com/example.Unknown", "", ""), req(typeURLs[typeSecret], "", "", "*")),
		seq(1, deltaFirst, &discovery.DeltaDiscoveryRequest{TypeUrl: typeURLs[typeEndpoint], ResponseNonce: "1",
			ResourceNamesUnsubscribe: []string{"other"}}),
		seq(1, &discovery.DeltaDiscoveryRequest{Node: n, TypeUrl: typeURLs[typeListener]},
			&discovery.DeltaDiscoveryRequest{TypeUrl: typeURLs[typeListener], ResponseNonce: "1",
				ErrorDetail: &rpcstatus.Status{Message: "no"}, ResourceNamesSubscribe: []string{"*"}}),
	}
}

// proxylessNodeOf is a proxyless gRPC client of nodeCluster.
func proxylessNodeOf(nodeCluster string) *core.Node {
	n := &core.Node{Id: "grpc-1", Cluster: nodeCluster}
	n.Metadata, _ = structpb.NewStruct(map[string]any{ProxylessMetadataKey: true})
	return n
}

// TestFuzzSeedCorpus checks that the committed seed corpus is the one
// fuzzSeeds gives; -update-seeds rewrites it.
func TestFuzzSeedCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDiscoveryRequest")
	for i, seed := range fuzzSeeds() {
		path := filepath.Join(dir, fmt.Sprintf("seed-%d", i))
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", seed)
		if *updateSeeds {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestFuzzSeedCorpus -update-seeds)", err)
		}
		if string(got) != want {
			t.Errorf("%s differs from fuzzSeeds()[%d]; run go test -run TestFuzzSeedCorpus -update-seeds", path, i)
		}
	}
}

package xds

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/gatewire/gatewire/services/xds/xdstest"
)

// envoyClient is a state-of-the-world ADS client that behaves like Envoy:
// it subscribes to every cluster and listener, then to the endpoints of
// its clusters and the route configurations of its listeners, and ACKs
// every response with the names it subscribes to. It reads responses raw
// (version, nonce and the resources' bytes) and decodes only listeners,
// so that a fleet of them costs their process little. A stuck client
// sends its requests and never reads.
type envoyClient struct {
	node   *core.Node
	stream grpc.ClientStream

	mu sync.Mutex
	// versions and arrived are the version of each type last received and
	// when it came.
	versions map[string]string
	arrived  map[string]time.Time
	nonce    map[string]string
	changed  chan struct{} // capacity 1: a response came
	names    map[string][]string
}

const adsMethod = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"

// startEnvoy opens the client's stream on conn and sends its first
// requests; it runs until ctx is done or the stream ends.
func startEnvoy(ctx context.Context, conn grpc.ClientConnInterface, n *core.Node, stuck bool, names map[string][]string) (*envoyClient, error) {
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, adsMethod,
		grpc.ForceCodecV2(rawClientCodec{proto: encoding.GetCodecV2(grpcproto.Name)}))
	if err != nil {
		return nil, err
	}
	c := &envoyClient{node: n, stream: stream, versions: map[string]string{}, arrived: map[string]time.Time{},
		nonce:   map[string]string{},
		changed: make(chan struct{}, 1), names: map[string][]string{}}
	first := []string{typeURLs[typeCluster], typeURLs[typeListener]}
	if stuck {
		first = append(first, typeURLs[typeEndpoint], typeURLs[typeRoute])
		c.names = names
	}
	for i, url := range first {
		req := &discovery.DiscoveryRequest{TypeUrl: url, ResourceNames: c.names[url]}
		if i == 0 {
			req.Node = n
		}
		if err := stream.SendMsg(req); err != nil {
			return nil, err
		}
	}
	if !stuck {
		go c.run()
	}
	return c, nil
}

// run reads responses until the stream ends.
func (c *envoyClient) run() {
	for {
		resp := &rawResponse{}
		if err := c.stream.RecvMsg(resp); err != nil {
			return
		}
		err := c.handle(resp)
		resp.free()
		if err != nil {
			return
		}
	}
}

func (c *envoyClient) handle(resp *rawResponse) error {
	names, err := resourceNames(resp)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.versions[resp.typeURL], c.arrived[resp.typeURL], c.nonce[resp.typeURL] = resp.version, time.Now(), resp.nonce
	subscribed := c.names[resp.typeURL]
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
	if err := c.stream.SendMsg(&discovery.DiscoveryRequest{TypeUrl: resp.typeURL, VersionInfo: resp.version,
		ResponseNonce: resp.nonce, ResourceNames: subscribed}); err != nil {
		return err
	}
	var next string
	switch resp.typeURL {
	case typeURLs[typeCluster]:
		next = typeURLs[typeEndpoint]
	case typeURLs[typeListener]:
		next = typeURLs[typeRoute]
		if names, err = routeNames(resp); err != nil {
			return err
		}
	default:
		return nil
	}
	slices.Sort(names)
	c.mu.Lock()
	old, had := c.names[next]
	c.names[next] = names
	version, nonce := c.versions[next], c.nonces(next)
	c.mu.Unlock()
	if had && slices.Equal(old, names) {
		return nil
	}
	return c.stream.SendMsg(&discovery.DiscoveryRequest{TypeUrl: next, VersionInfo: version, ResponseNonce: nonce, ResourceNames: names})
}

// nonces is the nonce of the last response of typeURL, which Envoy sends
// with a change of the names it subscribes to.
func (c *envoyClient) nonces(typeURL string) string { return c.nonce[typeURL] }

// version is the version of typeURL the client last received, and when.
func (c *envoyClient) version(typeURL string) (string, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.versions[typeURL], c.arrived[typeURL]
}

// waitVersion waits until the client holds version of typeURL.
func (c *envoyClient) waitVersion(ctx context.Context, typeURL, version string) (time.Time, error) {
	for {
		if v, at := c.version(typeURL); v == version {
			return at, nil
		}
		select {
		case <-c.changed:
		case <-ctx.Done():
			v, _ := c.version(typeURL)
			return time.Time{}, fmt.Errorf("node %s holds %s %q, want %q: %w", c.node.GetId(), typeURL, v, version, ctx.Err())
		}
	}
}

// resourceNames are the names of a response's resources.
func resourceNames(resp *rawResponse) ([]string, error) {
	out := make([]string, 0, len(resp.values))
	for _, v := range resp.values {
		name, err := xdstest.NameOf(v)
		if err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, nil
}

// routeNames are the route configurations a listener response's
// listeners take over RDS.
func routeNames(resp *rawResponse) ([]string, error) {
	var out []string
	for _, v := range resp.values {
		l := &listener.Listener{}
		if err := proto.Unmarshal(v, l); err != nil {
			return nil, err
		}
		names, err := listenerRoutes(l)
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	return out, nil
}

// rawResponse is a DiscoveryResponse read without decoding its resources:
// values are the bytes of each Any's value.
type rawResponse struct {
	version, typeURL, nonce string
	values                  [][]byte
	buf                     mem.Buffer // holds values until free
}

// free returns the response's bytes to gRPC's pool: a fleet of clients
// taking in large responses would otherwise spend its CPU collecting them.
func (r *rawResponse) free() {
	if r.buf != nil {
		r.buf.Free()
		r.buf, r.values = nil, nil
	}
}

// rawClientCodec reads responses as rawResponse, and writes requests with
// gRPC's proto codec.
type rawClientCodec struct{ proto encoding.CodecV2 }

func (c rawClientCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto.Marshal(v) }
func (rawClientCodec) Name() string                             { return grpcproto.Name }

func (c rawClientCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*rawResponse)
	if !ok {
		return c.proto.Unmarshal(data, v)
	}
	r.buf = data.MaterializeToBuffer(mem.DefaultBufferPool())
	return r.parse(r.buf.ReadOnlyData())
}

func (r *rawResponse) parse(b []byte) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			b = b[m:]
			continue
		}
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
		switch num {
		case respVersionInfo:
			r.version = string(v)
		case respTypeURL:
			r.typeURL = string(v)
		case respNonce:
			r.nonce = string(v)
		case respResources:
			value, err := anyValueOf(v)
			if err != nil {
				return err
			}
			r.values = append(r.values, value)
		}
	}
	return nil
}

// anyValueOf is the value field of an encoded Any.
func anyValueOf(b []byte) ([]byte, error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		if num == anyValue && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			return v, nil
		}
		b = b[n+m:]
	}
	return nil, errors.New("any without a value")
}

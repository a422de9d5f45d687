package xdsgen

import (
	"fmt"
	"sync"
	"unicode/utf8"

	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
)

// The resources a gateway has one of per route (an API listener per
// hostname, a cluster and a load assignment per backend) are written
// straight into protobuf's wire format when they have their common shape,
// without building the messages, checking them with ValidateAll and
// marshalling them: those steps were a third of a whole translation's
// CPU, most of it allocating and collecting messages that live for one
// call. The bytes are those proto's deterministic marshalling gives: a
// message's fields in field-number order, then the set fields of its
// oneofs in the order the oneofs are declared (protobuf-go keeps the
// order of the historic implementation), and a set oneof field or message
// even when empty. TestWireMatchesProto and FuzzWire compare the two, and
// TestWireGolden every resource of the golden cases. What ValidateAll
// would check is checked here (a cluster's name and an address are not
// empty, a port is at most 65535), and every string is valid UTF-8, as
// marshalling requires; anything else takes the path through the
// messages, which says what is wrong.

// useWire is cleared by tests to build every resource through its
// message.
var useWire = true

// apiListenerWire is the encoding of [apiListener] (host, routeConfig),
// given the encoding of its connection manager without the stat prefix
// (see [managerTail]), or false when host cannot take this path.
func apiListenerWire(host string, tail []byte) ([]byte, bool) {
	if !useWire || host == "" || !utf8.ValidString(host) {
		return nil, false
	}
	manager := sizeString(2, host) + len(tail)
	anyLen := sizeString(1, managerTypeURL) + sizeMessage(2, manager)
	api := sizeMessage(1, anyLen)
	b := make([]byte, 0, sizeString(1, host)+sizeMessage(19, api))
	b = appendString(b, 1, host)           // Listener.name
	b = appendMessageHead(b, 19, api)      // Listener.api_listener
	b = appendMessageHead(b, 1, anyLen)    // ApiListener.api_listener
	b = appendString(b, 1, managerTypeURL) // Any.type_url
	b = appendMessageHead(b, 2, manager)   // Any.value
	b = appendString(b, 2, host)           // HttpConnectionManager.stat_prefix
	return append(b, tail...), true
}

const managerTypeURL = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"

// managerTail is the encoding of the connection manager of an API listener
// whose routes are routeConfig, all but its stat prefix (its first field),
// checked with ValidateAll under the stat prefix host.
func managerTail(host, routeConfig string) ([]byte, error) {
	lis, err := apiListener(host, routeConfig, routerFilter)
	if err != nil {
		return nil, err
	}
	manager := &hcmv3.HttpConnectionManager{}
	if err := lis.GetApiListener().GetApiListener().UnmarshalTo(manager); err != nil {
		return nil, fmt.Errorf("proxyless listener %s: %w", host, err)
	}
	manager.StatPrefix = ""
	tail, err := proto.MarshalOptions{Deterministic: true}.Marshal(manager)
	if err != nil {
		return nil, fmt.Errorf("%w: proxyless listener %s: %v", ErrInvalid, host, err)
	}
	return tail, nil
}

// clusterTails are the encodings of [Cluster] of a backend without TLS, all
// but its name (its first field): for HTTP/2 backends and for the others.
var clusterTails = sync.OnceValues(func() ([2][]byte, error) {
	var tails [2][]byte
	for i, p := range []irv1.BackendProtocol{irv1.BackendProtocol_BACKEND_PROTOCOL_HTTP1, irv1.BackendProtocol_BACKEND_PROTOCOL_HTTP2} {
		c, err := Cluster(&irv1.Backend{Name: "tail", Protocol: p})
		if err == nil {
			err = c.ValidateAll()
		}
		if err != nil {
			return tails, fmt.Errorf("cluster of protocol %s: %w", p, err)
		}
		c.Name = ""
		if tails[i], err = (proto.MarshalOptions{Deterministic: true}).Marshal(c); err != nil {
			return tails, err
		}
	}
	return tails, nil
})

// clusterWire is the encoding of [Cluster] (be), or false when be has TLS
// to verify or a name that cannot take this path.
func clusterWire(be *irv1.Backend) ([]byte, bool) {
	name := be.GetName()
	if !useWire || trusted(be.GetTls()) || name == "" || !utf8.ValidString(name) {
		return nil, false
	}
	tails, err := clusterTails()
	if err != nil {
		return nil, false
	}
	tail := tails[0]
	if be.GetProtocol() == irv1.BackendProtocol_BACKEND_PROTOCOL_HTTP2 {
		tail = tails[1]
	}
	b := make([]byte, 0, sizeString(1, name)+len(tail))
	b = appendString(b, 1, name) // Cluster.name
	return append(b, tail...), true
}

// loadAssignmentWire is the encoding of [LoadAssignment] (be), or false
// when a name or an address cannot take this path.
func loadAssignmentWire(be *irv1.Backend) ([]byte, bool) {
	name := be.GetName()
	if !useWire || name == "" || !utf8.ValidString(name) {
		return nil, false
	}
	if refused(be) {
		return appendString(nil, 1, name), true
	}
	eps := be.GetEndpoints()
	sockets := make([]int, len(eps)) // each SocketAddress's size, 0 for those left out
	seen := newEndpointSet(len(eps))
	lbs := 0
	for i, e := range eps {
		if !e.GetReady() {
			continue
		}
		if e.GetAddress() == "" || e.GetPort() > 65535 || !utf8.ValidString(e.GetAddress()) {
			return nil, false
		}
		if !seen.add(e) {
			continue
		}
		sockets[i] = sizeString(2, e.GetAddress()) + protowire.SizeTag(3) + protowire.SizeVarint(uint64(e.GetPort()))
		lbs += sizeMessage(2, lbEndpointSize(sockets[i]))
	}
	total := sizeString(1, name)
	locality := 0
	if lbs > 0 {
		locality = sizeMessage(1, 0) + lbs + sizeMessage(3, 2) // Locality{}, the endpoints, UInt32Value{1}
		total += sizeMessage(2, locality)
	}
	b := make([]byte, 0, total)
	b = appendString(b, 1, name) // ClusterLoadAssignment.cluster_name
	if lbs == 0 {
		return b, true
	}
	b = appendMessageHead(b, 2, locality) // ClusterLoadAssignment.endpoints
	b = appendMessageHead(b, 1, 0)        // LocalityLbEndpoints.locality
	for i, e := range eps {
		socket := sockets[i]
		if socket == 0 {
			continue
		}
		address := sizeMessage(1, socket)
		endpoint := sizeMessage(1, address)
		b = appendMessageHead(b, 2, sizeMessage(1, endpoint)) // LocalityLbEndpoints.lb_endpoints
		b = appendMessageHead(b, 1, endpoint)                 // LbEndpoint.endpoint
		b = appendMessageHead(b, 1, address)                  // Endpoint.address
		b = appendMessageHead(b, 1, socket)                   // Address.socket_address
		b = appendString(b, 2, e.GetAddress())                // SocketAddress.address
		b = protowire.AppendTag(b, 3, protowire.VarintType)   // SocketAddress.port_value
		b = protowire.AppendVarint(b, uint64(e.GetPort()))
	}
	b = appendMessageHead(b, 3, 2) // LocalityLbEndpoints.load_balancing_weight
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	return protowire.AppendVarint(b, 1), true
}

// lbEndpointSize is the size of an LbEndpoint whose SocketAddress has
// size socket.
func lbEndpointSize(socket int) int {
	return sizeMessage(1, sizeMessage(1, sizeMessage(1, socket)))
}

func sizeString(num protowire.Number, s string) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

func sizeMessage(num protowire.Number, n int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

func appendMessageHead(b []byte, num protowire.Number, n int) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.BytesType), uint64(n))
}

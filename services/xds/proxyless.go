package xds

import (
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/structpb"
)

// ProxylessMetadataKey is the node metadata field that marks an xDS client
// as a proxyless gRPC client: true (a boolean, or the string "true"). Such
// a client of the gateway <namespace>/<gateway> (its node.cluster) is
// served the gateway's API listeners instead of its Envoy listeners. A
// gRPC-Go bootstrap sets it with
//
//	"node": {"id": "...", "cluster": "ns/gw", "metadata": {"gatewire.dev/proxyless": true}}
const ProxylessMetadataKey = "gatewire.dev/proxyless"

// isProxyless reports whether node carries the proxyless marker.
func isProxyless(node *core.Node) bool {
	v := node.GetMetadata().GetFields()[ProxylessMetadataKey]
	switch k := v.GetKind().(type) {
	case *structpb.Value_BoolValue:
		return k.BoolValue
	case *structpb.Value_StringValue:
		return k.StringValue == "true"
	}
	return false
}

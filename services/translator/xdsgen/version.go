package xdsgen

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// stamp gives a packed snapshot its versions. The snapshot's version is a
// hash of its resources in order, hashed again with its proxyless listeners
// when it has any, so that a change of anything is a new version. Each
// type's version is a hash of that type's resources and of the resources
// of the type it is sent with (see sentWith), so that the xds service sends
// a type again only when it changed or must be resent: a route edit sends
// one route configuration, not every cluster and endpoint again.
func stamp(snap *busv1.XdsSnapshot) {
	h := sha256.New()
	hashes := make(map[string][]byte, len(snap.GetResources()))
	for _, t := range snap.GetResources() {
		th := sha256.New()
		for _, a := range t.GetResources() {
			for _, h := range []hash.Hash{h, th} {
				hashField(h, []byte(a.GetTypeUrl()))
				hashField(h, a.GetValue())
			}
		}
		hashes[t.GetTypeUrl()] = th.Sum(nil)
	}
	for _, t := range snap.GetResources() {
		t.Version = typeVersion(t.GetTypeUrl(), hashes)
	}
	snap.Version = sum(h)
	if len(snap.GetProxylessListeners()) == 0 {
		return
	}
	h = sha256.New()
	hashField(h, []byte(snap.Version))
	for _, a := range snap.GetProxylessListeners() {
		hashField(h, a.GetValue())
	}
	snap.Version = sum(h)
}

// sentWith names, for a type, the type whose change must send it again:
// an Envoy warms a changed cluster until it receives its endpoints, and a
// changed listener until it receives its route configuration.
var sentWith = map[string]string{
	resourcev3.EndpointType: resourcev3.ClusterType,
	resourcev3.RouteType:    resourcev3.ListenerType,
}

// typeVersion is the version of one type of a snapshot, from the hashes of
// each type's resources.
func typeVersion(typeURL string, hashes map[string][]byte) string {
	h := sha256.New()
	hashField(h, hashes[typeURL])
	if with, ok := sentWith[typeURL]; ok {
		hashField(h, hashes[with])
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// hashField writes b to h with its length, so that no two different lists of
// fields hash alike.
func hashField(h hash.Hash, b []byte) {
	var n [binary.MaxVarintLen64]byte
	h.Write(binary.AppendUvarint(n[:0], uint64(len(b))))
	h.Write(b)
}

func sum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)[:16]) }

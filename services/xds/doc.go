// Package xds is gatewire's xDS server: it serves each gateway's snapshot
// from the xds bucket to that gateway's Envoys.
//
// # Input
//
// The service reads only the <sys>-xds bucket. Its key is
// <namespace>.<gateway> ([bus.GatewayKey]) and its value a
// busv1.XdsSnapshot, written by the translator: the gateway's node cluster,
// a version, its resources by type URL as Any, and the API listeners of
// its proxyless gRPC clients (see below). Each value is decoded
// into a go-control-plane snapshot: every resource must be of a served type
// (listener, route, cluster, endpoint, secret, ...), have a unique name
// within its type and pass ValidateAll, and the snapshot must be
// Consistent. Listeners, routes, clusters, endpoints and secrets are always
// in the snapshot, empty when the gateway has none, so an Envoy's first
// request of every type is answered. A value that fails any check is
// logged with its key, counted in gatewire_xds_snapshots_rejected_total,
// and not served: the gateway's previous good snapshot stays. Deleting a
// key replaces the gateway's snapshot with an empty one (every served type
// present, with no resources) at the version "deleted", so its connected
// Envoys drop the gateway's listeners, routes and clusters, and Envoys that
// connect later get nothing to serve; so does its proxyless snapshot.
//
// # Serving
//
// One gRPC port (GATEWIRE_XDS_ADDRESS) serves ADS and the per-type services
// (LDS, RDS, CDS, EDS, SDS), each state-of-the-world and delta, from
// go-control-plane snapshot caches. Envoys are served from a cache in ADS
// mode keyed by node.cluster: an Envoy whose node.cluster is <namespace>/<gateway> gets
// that gateway's snapshot, shared by all Envoys of the gateway. A node with
// an empty cluster is refused with InvalidArgument; a node whose cluster has
// no snapshot waits until one arrives.
//
// # Proxyless gRPC clients
//
// A node whose metadata has [ProxylessMetadataKey] ("gatewire.dev/proxyless")
// set to true is a proxyless gRPC client of the gateway its node.cluster
// names. It is served the gateway's proxyless snapshot: the API listeners
// of the bus value's proxyless_listeners instead of the Envoy listeners,
// and the same routes, clusters and endpoints, at the same version (no
// secrets: the private keys of the gateway's listeners are for its Envoys). The translator names an API listener like the hostname a client
// dials (xds:///<hostname>, no port). The proxyless snapshots are in a
// second cache, keyed <namespace>/<gateway>/proxyless, that is not in ADS
// mode: a gRPC client names only the resources its channels use, and is
// answered with those that exist; a listener or cluster it names that is
// gone is left out of the answer, which tells the client it was removed.
// A value whose API listeners do not decode, fail ValidateAll, are not
// api_listeners, or name a route configuration the value does not hold, is
// rejected as a whole, like any bad value. NACKs of proxyless clients are
// held, counted and reported like those of Envoys, under the gateway of
// their node.cluster. A client whose node user agent starts with "gRPC"
// but that is not marked is served the Envoy listeners, and logged at warn
// with the marker it lacks.
//
// The service keeps no state of its own: a new replica reads the bucket and
// serves the same snapshots. When NATS is away the cache keeps serving the
// last good snapshots; the bus watch resumes on its own, and a watch that
// had to be reopened empties, after its initial sync, only the gateways no
// longer in the bucket. [Service.Ready] turns true once the first initial
// sync of the bucket is done.
//
// # ACKs and NACKs
//
// Every response a client answers is counted on the meter "gatewire/xds" as
// gatewire_xds_acks_total or gatewire_xds_nacks_total with the attributes
// gateway (node.cluster), version and type_url.
//
// A NACK is held, not answered: the server sends nothing more of that type
// on that stream until the gateway's snapshot changes, that is until a new
// version arrives from the bus; then the new version is sent. (A NACK of a
// version the cache no longer holds is answered at once with the current
// one.) go-control-plane's cache alone would resend the rejected version,
// which the client rejects again, at thousands of NACKs a second.
// Clients that accepted a version keep it: nothing is pushed to them
// either. Delta streams never resend a rejected response: the server sends
// a delta client only resources whose versions changed.
//
// A NACK of the version the cache serves is made visible:
//   - logged at warn as "xds nack" with the client's error_detail, once per
//     version, client (node.id) and type URL, not once per NACK;
//   - written to the status bucket under [bus.DataPlaneStatusKey](ns, name,
//     replica) as a busv1.Status of the Gateway ns/name with the condition
//     Programmed: False, reason Invalid, whose message names the client,
//     the rejected version, its type URL and the client's error detail.
//
// The entry is deleted when a client ACKs a later version of that type (the
// version the cache then serves), when the gateway is deleted, and when
// every stream that rejected the version has closed: the client may have
// moved to another replica, which then writes its own entry. Each replica
// writes only its own key (GATEWIRE_XDS_REPLICA_ID, the host name by
// default), deletes the entries its id left behind in an earlier run when
// it starts, and deletes its entries when it stops.
//
// # Replicas
//
// Any number of replicas serve the same snapshots: the version is the bus
// value's, the same on every replica. A state-of-the-world client that
// reconnects, to the same or another replica, and names in its first
// request of a type the version the replica serves, gets no response until
// the version changes: it has that configuration already.
// (go-control-plane's cache alone would send it again on every new stream.)
// A delta client that reconnects declares its resources in
// initial_resource_versions; per-resource versions are hashes of the
// resources, the same on every replica, so it is sent nothing it has (a
// wildcard stream gets one empty response, as on every new delta stream).
package xds

// Package xds is gatewire's xDS server: it serves each gateway's snapshot
// from the xds bucket to that gateway's Envoys.
//
// # Input
//
// The service reads only the <sys>-xds bucket, in its layout (package
// xdsbucket): one key per resource, <namespace>.<gateway>.<kind>.<name>,
// and a commit per gateway under <namespace>.<gateway> ([bus.GatewayKey]),
// written last, that names the resources of the gateway's snapshot by
// count and digest. An xdsbucket.Stage assembles a snapshot when a commit
// and its resources are all there. Each resource is decoded once, when
// its key changes, into its Envoy type (VirtualHost for a virtual host,
// RouteConfiguration for a route configuration's shell, Listener, Cluster,
// ClusterLoadAssignment, Secret) and must pass ValidateAll and carry the
// name its key says; what it names is kept, so that each snapshot is
// checked for consistency without decoding it again: every route
// configuration a listener takes over RDS exists, every EDS cluster has
// its endpoints, every cluster a route sends to exists. A refused value, a
// commit whose resources are not all there (or that holds resources
// inline, as older writers did), and an inconsistent snapshot are logged
// at warn with the key, without listing resources, counted in
// gatewire_xds_snapshots_rejected_total, and not served: the gateway's
// previous good snapshot stays. Deleting a gateway's commit replaces its
// snapshot with an empty one (every served type present, with no
// resources) at the version "deleted", so its connected clients drop the
// gateway's listeners, routes and clusters, and clients that connect
// later get nothing to serve.
//
// Each type of a snapshot is served at the version its commit gives it
// (the snapshot's version when the commit gives types no version; a type
// the commit does not hold is then served empty at "empty"), so a route
// edit sends only route configurations. Listeners, routes, clusters,
// endpoints and secrets are always served, empty when the gateway has
// none, so an Envoy's first request of every type is answered.
//
// # Serving
//
// One gRPC port (GATEWIRE_XDS_ADDRESS) serves ADS and the per-type services
// (LDS, RDS, CDS, EDS, SDS), each state-of-the-world and delta, with
// gatewire's own server over go-control-plane's generated protos. An
// Envoy whose node.cluster is <namespace>/<gateway> is served that
// gateway's snapshot, shared by all its clients. A node with an empty
// cluster is refused with InvalidArgument; a node whose cluster has no
// snapshot waits until one arrives.
//
// Streams share the encoded bytes: a snapshot holds, per type and version,
// the state-of-the-world response (version, resources, type URL) encoded
// once from the bytes the translator published, and every stream that
// subscribes to all of the type's resources is sent those bytes with its
// own nonce appended, through a gRPC codec that sends them without a copy;
// a delta response is each resource's encoded Resource head and its shared
// bytes. Setting a snapshot never waits: the store swaps the gateway's
// immutable snapshot and wakes its streams without blocking; each stream
// computes its next response from the latest snapshot, one response per
// type outstanding until the client answers it, so a slow client skips
// versions instead of queueing them. When several types changed, a stream
// sends secrets, clusters, endpoints, listeners and then routes: what a
// resource needs arrives before it; but when clusters the client holds
// go, an ADS stream sends listeners and routes first and the clusters
// after them, so that nothing still routes to a removed cluster (see
// order.go). A response that a client does not take
// within GATEWIRE_XDS_SEND_TIMEOUT closes its stream, logged and counted in
// gatewire_xds_send_timeouts_total; other streams never wait for it. A
// stream keeps only what it needs to compute its next response: per type
// the names it subscribes to (a subscription to all of a type's resources
// shares the snapshot's name set), the version and nonce it was last sent
// (with the name set of that version, shared too, and whether it got all
// of it), what it ACKed and its last NACK. [Service.Streams] lists the open
// streams with that state.
//
// An Envoy that names routes or endpoints is sent them once it names every
// resource of the type the snapshot holds, as it does after it applied
// the listeners or clusters that need them; any other named subscription
// (a proxyless client's, secrets) is answered with the resources it names
// that exist.
//
// # Trust
//
// The server serves TLS 1.3 and requires of every client a certificate
// that chains to the CA bundle of GATEWIRE_XDS_TLS_CA; its own certificate
// and key are GATEWIRE_XDS_TLS_CERT and _KEY. The files are read at start
// (a file that does not load stops the service, naming its variable) and
// again at a handshake once a second has passed (certs.Reloader): a
// renewed certificate or CA bundle serves new connections, and open ones
// stay. Plaintext, to any client, only with GATEWIRE_XDS_INSECURE=true,
// which is logged as a warning at start.
//
// A client's certificate names its gateway in a SPIFFE URI SAN,
// spiffe://<GATEWIRE_TRUST_DOMAIN>/ns/<namespace>/gateway/<name>. A
// stream's first request must name that gateway in node.cluster; a
// request naming another, first or later, ends the stream with
// PermissionDenied and a message that names both, before anything is
// served, counted, listed by [Service.Streams], or written to the status
// or proxies buckets (the stream was never attached to a gateway). A
// stream serves the one gateway it was attached to for its life, and
// names it asks for are looked up in that gateway's snapshot only, so its
// secrets are those the translator put in that gateway's snapshot: the
// ones its listeners reference.
//
// # Proxies
//
// Each replica writes every attached stream to the proxies bucket
// ([bus.Proxies]) as a busv1.ProxyStatus under
// <ns>.<gateway>.<replica>.<stream>: when it attaches, after the responses
// and answers that change it (at most once a second), every
// [bus.ProxiesRefresh], and deletes it when the stream ends and when the
// replica stops (the bucket's TTL removes what a dead replica left);
// `gatewire proxy-status` reads it. The gauge
// gatewire_xds_stream_stale_seconds is, per gateway and type, the longest
// an open stream has not acknowledged the version served now.
//
// # Proxyless gRPC clients
//
// A node whose metadata has [ProxylessMetadataKey] ("gatewire.dev/proxyless")
// set to true is a proxyless gRPC client of the gateway its node.cluster
// names. It is served the gateway's API listeners (the resources of kind
// api) instead of the Envoy listeners, and the same routes, clusters and
// endpoints, at the same versions, sharing their encoded responses (no
// secrets: the private keys of the gateway's listeners are for its
// Envoys). The translator names an API listener like the hostname a client
// dials (xds:///<hostname>, no port). A gRPC client names only the
// resources its channels use, and is answered with those that exist; a
// listener or cluster it names that is gone is left out of the answer,
// which tells the client it was removed. When its names grow, it is sent
// the resources it now names even if the version did not change: a
// client that names every resource of a type after it was sent part of
// it does not have them all. An API listener that does not
// decode, fails ValidateAll, is not an api_listener, or names a route
// configuration the snapshot does not hold, is refused like any bad
// value. NACKs of proxyless clients are
// held, counted and reported like those of Envoys, under the gateway of
// their node.cluster. A client whose node user agent starts with "gRPC"
// but that is not marked is served the Envoy listeners, and logged at warn
// with the marker it lacks.
//
// The service keeps no state of its own: a new replica reads the bucket and
// serves the same snapshots. When NATS is away the store keeps serving the
// last good snapshots; the bus watch resumes on its own, and a watch that
// had to be reopened empties, after its initial sync, only the gateways no
// longer in the bucket. [Service.Ready] turns true once the first initial
// sync of the bucket is done.
//
// # ACKs and NACKs
//
// Every response a client answers is counted on the meter "gatewire/xds" as
// gatewire_xds_acks_total or gatewire_xds_nacks_total with the attributes
// gateway (node.cluster, "unknown" unless the bucket holds the gateway) and
// type_url; no metric has a version attribute. The meter's other
// instruments are listed in the README.
//
// A NACK is held, not answered: the server sends nothing more of that type
// on that stream until the type's version changes; then the new version is
// sent. (A NACK of a version no longer served is answered at once with the
// current one.) Resending the rejected version would have the client
// reject it again, at thousands of NACKs a second. Clients that accepted
// a version keep it: nothing is pushed to them either. Delta streams never
// resend a rejected response: the server sends a delta client only
// resources whose versions changed.
//
// A NACK of the version served is made visible (its error detail cut at 4
// KiB in logs and status, at 1 KiB in what a stream keeps):
//   - logged at warn as "xds nack" with the client's error_detail, once per
//     version, client (node.id) and type URL, not once per NACK;
//   - written to the status bucket under [bus.DataPlaneStatusKey](ns, name,
//     replica) as a busv1.Status of the Gateway ns/name with the condition
//     Programmed: False, reason Invalid, whose message names the client,
//     the rejected version, its type URL and the client's error detail.
//
// The entry is deleted when a client ACKs a later version of that type (the
// version then served), when the gateway is deleted, and when
// every stream that rejected the version has closed: the client may have
// moved to another replica, which then writes its own entry. Each replica
// writes only its own key (GATEWIRE_XDS_REPLICA_ID, the host name by
// default), deletes the entries its id left behind in an earlier run when
// it starts, and deletes its entries when it stops.
//
// Each snapshot set is one OpenTelemetry span "xds push" (tracer
// "gatewire/xds"), a child of the trace context of the bus entry that
// completed the snapshot, so a trace follows a change from the provider to
// the push.
//
// # Replicas
//
// Any number of replicas serve the same snapshots: the version is the bus
// commit's, the same on every replica. A state-of-the-world client that
// reconnects, to the same or another replica, and names in its first
// request of a type the version the replica serves, gets no response until
// the version changes: it has that configuration already.
// A delta client that reconnects declares its resources in
// initial_resource_versions; per-resource versions are hashes of the
// resources, the same on every replica, so it is sent nothing it has (a
// wildcard stream gets one empty response, as on every new delta stream).
package xds

// Package xds is gatewire's xDS server: it serves each gateway's snapshot
// from the xds bucket to that gateway's Envoys.
//
// # Input
//
// The service reads only the <sys>-xds bucket. Its key is
// <namespace>.<gateway> ([bus.GatewayKey]) and its value a
// busv1.XdsSnapshot, written by the translator: the gateway's node cluster,
// a version, and its resources by type URL as Any. Each value is decoded
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
// connect later get nothing to serve.
//
// # Serving
//
// One gRPC port (GATEWIRE_XDS_ADDRESS) serves ADS and the per-type services
// (LDS, RDS, CDS, EDS, SDS), each state-of-the-world and delta, all from one
// go-control-plane snapshot cache in ADS mode. The cache is keyed by
// node.cluster: an Envoy whose node.cluster is <namespace>/<gateway> gets
// that gateway's snapshot, shared by all Envoys of the gateway. A node with
// an empty cluster is refused with InvalidArgument; a node whose cluster has
// no snapshot waits until one arrives.
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
// Every response an Envoy answers is counted on the meter "gatewire/xds" as
// gatewire_xds_acks_total or gatewire_xds_nacks_total with the attributes
// gateway (node.cluster), version and type_url; a NACK is also logged with
// the client's error_detail.
package xds

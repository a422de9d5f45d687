// Package xdsgen turns gatewire's IR into Envoy xDS resources.
//
// There is one stateless function per xDS type, each in its own file:
// [Listener] and [RouteConfiguration] for an IR Listener, [Cluster] and
// [LoadAssignment] for an IR Backend, [Secret] for an IR Secret. [Snapshot]
// builds them all for a gateway, checks every resource with ValidateAll
// (and every typed config inside one, which ValidateAll does not reach)
// and the whole set for consistency, and packs it as a [busv1.XdsSnapshot].
//
// Encoding: a cluster and a load assignment of the common shape (no TLS to
// verify) and an API listener are written straight into protobuf's wire
// format, byte for byte what proto's deterministic marshalling of the
// same message gives, and checked for what ValidateAll would reject; the
// other resources are built as messages, checked and marshalled (see
// wire.go).
//
// Naming: the Envoy listener and its RouteConfiguration are named like the IR
// listener ("http-8080"); a cluster and its ClusterLoadAssignment are named
// like the IR backend ("<namespace>/<service>/<port>"); an SDS secret like
// the IR secret ("<namespace>/<secret>"). Every dynamic resource is fetched
// over ADS. Listeners of TLS and TCP carry no RouteConfiguration; TLS
// listeners pick a filter chain by SNI (terminating TLS or passing it
// through), TCP and UDP listeners proxy to their first route's backends.
//
// Routes: an IR route is one Envoy route of the same name, except an
// HTTPRoute's path prefix P other than "/": it is a route for the exact
// path P (named "<route>/exact") followed by one for the prefix "P/"
// (named like the IR route), see splitPrefix. Path matches are exact
// paths, prefixes and regexes only, the ones gRPC's xDS client accepts
// (proxyless clients are served the same RouteConfigurations); a route
// retries only when the IR route has a retry policy. What a redirect writes
// as its port depends on the listener (see redirectPort). A listener whose
// routes have a CORS policy gets Envoy's CORS filter before the router, and
// each such route its policy in typed_per_filter_config.
//
// Ports: Envoy binds [BindPort] of a listener's port, so that a proxy never
// needs privileges: ports below 1024 are moved up by 10000. The infra spec
// maps the gateway port to that container port.
//
// Invalid backends: a weighted share whose IR backend name is empty (a
// backendRef that could not be resolved) goes to the cluster
// [InvalidBackendCluster], which never exists, and the route answers 500 for
// it (cluster_not_found_response_code); a TCP proxy closes such
// connections. It is the only name a route or proxy may use without a
// cluster behind it.
package xdsgen

// Package resources indexes the Kubernetes objects the translator reads from
// the resources bucket: GatewayClasses, Gateways, HTTPRoutes, Services,
// EndpointSlices and Namespaces, decoded into their typed Go structs.
//
// An [Index] is built from [busv1.Resource] values ([Index.Apply],
// [Index.Remove]) or from multi-document YAML ([LoadYAML], for tests, the
// benchmark and `gatewire translate`). Kinds the translator does not read are
// ignored. Besides lookups by name it keeps reverse indexes (routes by parent
// gateway, routes by backend Service, EndpointSlices by Service, gateways by
// class) so that translating one gateway and finding the gateways a change
// affects cost time in proportion to what is involved, not to the size of
// the cluster.
//
// An Index is not safe for concurrent use: lookups may run concurrently with
// each other, but not with Apply or Remove. The translator's loop owns its
// index and translates between changes. Objects returned by lookups are
// shared with the index and must not be modified.
package resources

// Package resources indexes the Kubernetes objects the translator reads from
// the resources bucket, decoded into their typed Go structs: GatewayClasses,
// Gateways, ListenerSets, HTTPRoutes, GRPCRoutes, TLSRoutes, TCPRoutes, UDPRoutes,
// ReferenceGrants, BackendTLSPolicies, Services, EndpointSlices, Namespaces,
// Secrets and ConfigMaps. Objects of the Gateway API's older versions decode
// into the v1 types, whose schema they share.
//
// An [Index] is built from [busv1.Resource] values ([Index.Apply],
// [Index.Remove]) or from multi-document YAML ([LoadYAML], for tests, the
// benchmark and `gatewire translate`). Kinds the translator does not read are
// ignored. Besides lookups by name it keeps reverse indexes so that
// translating one gateway and finding the gateways a change affects cost
// time in proportion to what is involved, not to the size of the cluster:
//
//   - routes (of every kind) by parent gateway and by backend Service;
//   - ListenerSets by parent gateway, and routes by the ListenerSets they
//     name as parents (such a route belongs to the ListenerSet's gateway);
//   - EndpointSlices by Service, gateways by class;
//   - Secrets → the gateways that use them as certificates (their
//     listeners', or the client certificate they present to backends);
//   - BackendTLSPolicies by target Service, ConfigMaps → the policies that
//     take CA certificates from them (and so the routes of those Services)
//     and the gateways that validate client certificates with them;
//   - ReferenceGrants by namespace, and gateways and routes by the
//     (from, to) namespaces of their cross-namespace references, so that a
//     grant affects only the gateways whose references it may allow.
//
// A Namespace affects every gateway (its labels may change what a listener's
// namespace selector admits).
//
// An Index is not safe for concurrent use: lookups may run concurrently with
// each other, but not with Apply or Remove. The translator's loop owns its
// index and translates between changes. Objects returned by lookups are
// shared with the index and must not be modified.
package resources

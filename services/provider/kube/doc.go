// Package kube is the Kubernetes mode of the provider: it publishes the
// Gateway API objects of a cluster, and what they depend on, to the
// resources bucket, and writes the status bucket back to the objects.
//
// It runs a controller-runtime manager. Everything below is level-based:
// each step reads the current state and writes only what differs, so that
// running it twice, or on two replicas, is harmless.
//
// # What is published
//
// GatewayClass (only those whose spec.controllerName is
// Options.ControllerName), Gateway, ListenerSet, HTTPRoute, GRPCRoute,
// TLSRoute, TCPRoute, UDPRoute, ReferenceGrant, BackendTLSPolicy (all
// gateway.networking.k8s.io/v1), Service, EndpointSlice and Namespace, and
// the Secrets and ConfigMaps referenced as described below. Each is one
// busv1.Resource under bus.ResourceKey, as in the file mode: the object
// JSON (keys sorted) with status and metadata.managedFields removed,
// apiVersion and kind set, uid, generation and resourceVersion copied from
// the object, origin "kubernetes". An object is published again only when
// its content, resourceVersion aside, changes: a status write (the
// provider's own, for instance) publishes nothing, so the translator is not
// woken by its own output. A deleted object's key is deleted.
//
// On start, once the caches are synced, every object is published and the
// keys of origin "kubernetes" that no object has any more are deleted
// (keys of other origins are left alone); Ready is true from then on.
//
// A kind the cluster does not serve (its CRD is not installed, for example
// TLSRoute without the experimental channel) is logged once, at level
// warn, and not watched; the provider must be restarted to pick it up once
// it is installed.
//
// With Options.Namespaces, namespaced objects are watched in those
// namespaces only (the cache lists and watches each of them), and only
// those Namespace objects are published.
//
// # Secrets and ConfigMaps
//
// The provider never holds a cluster-wide cache of Secrets. A Secret or
// ConfigMap is published only while it is referenced:
//
//   - by a Gateway of its own namespace: listener
//     tls.certificateRefs, spec.tls.backend.clientCertificateRef, and
//     spec.tls.frontend caCertificateRefs;
//   - by a Gateway of another namespace that a ReferenceGrant in the
//     object's namespace allows (from Gateway, to the object's kind, and its
//     name or any name): without the grant, a Gateway cannot pull another
//     namespace's Secret onto the bus;
//   - by a ListenerSet, like a Gateway (its listeners' certificateRefs), a
//     ReferenceGrant from ListenerSet allowing the other namespaces: a
//     grant to Gateways does not cover ListenerSets;
//   - by a BackendTLSPolicy of its namespace (validation.caCertificateRefs).
//
// To learn of changes, the provider follows the metadata only of Secrets
// and ConfigMaps (a metadata informer, managedFields stripped): their data
// never leaves the API server unless referenced. A cache index of Gateways
// and BackendTLSPolicies by reference tells, for each metadata event,
// whether the object is referenced; only then is it read, by name, from the
// API server (Secrets and ConfigMaps are excluded from the client's cache)
// and published. An unreferenced Secret's change costs one index lookup and
// publishes nothing. Changes of the references (a Gateway created, edited
// or deleted, a ReferenceGrant changed) re-read the objects concerned, and
// an object no longer referenced has its key deleted. Updates of a Gateway
// that do not change its references (its status, for one) read nothing.
//
// The cost of this choice is in RBAC: following metadata needs list and
// watch on secrets and configmaps, as a full informer would (Kubernetes
// RBAC cannot grant metadata-only access); what it saves is the memory and
// the traffic of every Secret's data, and the exposure of unreferenced
// Secrets in the provider's memory and on the bus.
//
// # Status
//
// The status bucket is followed into a status.Store on every replica. On
// the elected replica, one controller per kind (GatewayClass, Gateway, the
// five route kinds and BackendTLSPolicy) merges an object's entries with its
// live status (package status says how) whenever an entry or the object
// changes, and writes the status subresource when the result differs from
// the cached object. The write starts from the object read from the API
// server and is retried on conflict (client-go's retry.DefaultRetry).
// Writes and conflicts are counted in gatewire_provider_status_writes_total
// and gatewire_provider_status_conflicts_total (attribute kind), and by
// StatusWrites and StatusConflicts. A status controller starts only once
// the status bucket has been read in full, so no status is written from
// part of an object's entries.
//
// # Replicas
//
// Publishing runs on every replica. Status writing runs on one, elected
// with a Lease (controller-runtime's leader election, Options.LeaseName in
// Options.LeaseNamespace). A replica that stops releases the Lease, and
// another takes over within Options.RetryPeriod; one that dies is replaced
// once the Lease expires (Options.LeaseDuration). A replica that loses its
// Lease stops its manager and starts a new one, which campaigns again.
//
// # Permissions
//
// get, list and watch on every published kind, secrets and configmaps
// included; update on the status subresource of gatewayclasses, gateways,
// listenersets, the route kinds and backendtlspolicies; in the lease
// namespace, get, create and update on coordination.k8s.io leases, and
// create and patch on events (the leader election records one when a
// replica takes the Lease).
// A test runs the provider with exactly these.
package kube

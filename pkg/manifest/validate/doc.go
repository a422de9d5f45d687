// Package validate checks objects read from files the way the Kubernetes API
// server checks them on `kubectl apply`, so that a manifest the file provider
// or `gatewire translate` accepts is one a cluster would accept, and the other
// way round.
//
// Gateway API kinds are checked against the CustomResourceDefinitions of
// sigs.k8s.io/gateway-api v1.6.3 (the experimental channel, embedded in this
// package under crds/), exactly as the apiextensions-apiserver does on create:
//
//  1. status is dropped (every Gateway API kind has a status subresource);
//  2. nulls of non-nullable fields without a default are pruned, then the
//     schema's defaults are applied (structural defaulting: a listener gets
//     allowedRoutes.namespaces.from Same, a backendRef gets kind Service, ...);
//  3. metadata is checked (name, namespace, labels, annotations, finalizers,
//     owner references);
//  4. the OpenAPI v3 schema (types, enums, patterns, lengths, required fields),
//     embedded resources and x-kubernetes-list-type set/map uniqueness. A
//     quick check compiled once per schema (quick.go) tells when an object
//     is valid; only when it cannot tell does kube-openapi's validator run,
//     whose errors the API server returns. kube-openapi builds a new
//     validator for every field of every object, which was half the cost of
//     validating an HTTPRoute. A test checks, on thousands of invalid
//     objects, that the quick check never calls valid what kube-openapi
//     refuses;
//  5. the CEL rules (x-kubernetes-validations), unless step 4 found an error
//     that blocks them, as the API server does. The rules are compiled by
//     apiextensions' cel.Compile and evaluated by this package (rules.go),
//     with the API server's errors and cost budget: apiextensions' own
//     evaluator rebuilds schema adapters on every field a rule reads, which
//     more than doubled the cost of validating an HTTPRoute. A test checks
//     that both give the same errors on every object of the tests. Each
//     schema node remembers what its rules gave, and cost, on the values it
//     has seen (rules_memo.go): objects of a kind repeat values (the same
//     parentRefs, the same path matches), and a rule is a function of its
//     value, so a value seen before replays its outcomes through the same
//     budget logic instead of running CEL again.
//
// The object is checked against the schema of the version it names when the
// CustomResourceDefinition serves that version, and against the storage
// version otherwise.
//
// Compiling a kind's schema and CEL rules is expensive (tens to hundreds of
// milliseconds per kind); it is done once per process and kind version, on
// first use (or up front with Precompile), and the compiled validators are
// shared by every later call. The CEL rules of a schema node are compiled
// when the node first sees a value: a compiled rule holds tens of kilobytes,
// and most nodes (filters, policies a folder does not use) never do.
// Validating an object then costs what evaluating the rules costs.
//
// Core kinds (Namespace, Service, EndpointSlice, Secret, ConfigMap) get the
// checks of k8s.io/kubernetes' validation that matter to a gateway, after the
// same defaulting the API server applies to the fields checked (port protocol
// TCP, Service type ClusterIP). They are not modified, except that a
// Namespace gets the label kubernetes.io/metadata.name set to its name, as
// the API server sets it on every Namespace (Gateways select namespaces by
// it):
//   - every kind: metadata as above; Namespace and Service names are DNS-1123
//     and DNS-1035 labels respectively;
//   - Service: ports required (unless headless or ExternalName), each port's
//     name (required and unique when there are several), port 1-65535,
//     protocol TCP/UDP/SCTP, targetPort a port number or an IANA service name,
//     appProtocol a qualified name; type one of the four; externalName for an
//     ExternalName Service; clusterIP "None" or an IP; selector labels;
//   - EndpointSlice: addressType IPv4/IPv6/FQDN, 1 to 100 addresses per
//     endpoint of that type, at most 1,000 endpoints, port names DNS labels and
//     unique, protocol TCP/UDP/SCTP, appProtocol (the port number is not
//     range-checked, as Kubernetes does not check it);
//   - Secret: data keys, total size at most 1 MiB, tls.crt and tls.key for a
//     kubernetes.io/tls Secret;
//   - ConfigMap: data and binaryData keys, not in both, total size 1 MiB.
//
// Deliberately not checked: the API server's refusal of loopback and
// link-local endpoint addresses (an EndpointSlice pointing at 127.0.0.1 is
// how a local backend is reached when gatewire runs on a host), and
// everything that depends on other objects or on an earlier version of the
// object (immutable fields, ratcheting).
//
// A test creates every case of the package's tests on a real kube-apiserver
// with the same CustomResourceDefinitions (envtest, server-side dry run) and
// checks that the server refuses the same objects, with the same errors for
// the Gateway API kinds.
//
// Everything in the package is safe for concurrent use.
package validate

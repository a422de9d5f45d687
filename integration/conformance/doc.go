// Package conformance runs the Gateway API conformance suite
// (sigs.k8s.io/gateway-api/conformance, the version pinned in go.mod) against
// gatewire: a real kube-apiserver and etcd (envtest, with the pinned Gateway
// API CRDs), an embedded NATS server, and the provider (kubernetes mode), the
// translator and the infra service (kubernetes mode) in this process, each
// through its package's New and Run.
//
// There is no Envoy, no kubelet and no kube-controller-manager here, so only
// the conformance tests that check status and send no traffic are run: the
// table in tests_test.go names each, and every other test of the suite is
// skipped by the suite (SkipTests). What each substitute does:
//
//   - Gateway addresses: the infra service makes each Gateway's Service with
//     type ClusterIP, which the API server fills without a cloud, and
//     publishes its cluster IP to the status bucket; the provider writes it
//     to the Gateway's status.addresses.
//   - Programmed: in gatewire the translator sets a Gateway Programmed once
//     its configuration translates into valid xDS; the xds service only
//     turns it False while an Envoy rejects that configuration (see package
//     status of the provider). With no Envoy nothing is rejected, so the
//     condition is the translator's: nothing is forced.
//   - Pods: the suite waits for the Pods of its backend Deployments to be
//     Ready. Without a kubelet none exist, so the test stands in for the
//     Deployment controller and the kubelet for the suite's own Deployments
//     only (see kubelet_test.go). Gatewire never reads Pods, and the Envoy
//     Deployments the infra service makes get no Pods.
//
// The package holds tests only. They need the envtest binaries: run
// `make envtest-assets` and set KUBEBUILDER_ASSETS to the folder it prints
// (`make test` does both); without them the test fails.
package conformance

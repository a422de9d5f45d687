// Package deploy tests the Kubernetes manifests under deploy/k8s: each
// overlay is rendered with the kustomize Go API, its shape is checked
// (replicas, security context, probes, resources, the NATS cluster), and the
// rendered objects are sent to a real kube-apiserver (envtest) with a
// server-side dry run. The RBAC of each service is checked by acting as its
// ServiceAccount against that server.
//
// The package holds tests only. They need the envtest binaries: run
// `make envtest-assets` and set KUBEBUILDER_ASSETS to the folder it prints
// (`make test` does both); without them every test fails.
package deploy

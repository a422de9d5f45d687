// Package conformance runs the manifests of the Gateway API conformance suite
// (sigs.k8s.io/gateway-api/conformance, the version pinned in go.mod) through
// gatewire offline: every manifest must pass the checks the Kubernetes API
// server makes (package validate of the provider) and translate without a
// panic into valid xDS, and for the tests that only check status conditions,
// gatewire must give the conditions each test expects.
//
// The package holds only tests; this file carries its documentation. The
// expectations are in table_test.go (the BackendTLSPolicy tests' in
// policy_test.go), one entry per conformance test, copied from the test's
// .go file in the conformance module; an entry names the gatewire feature
// it waits for when gatewire does not meet it yet.
package conformance

package conformance

import (
	"slices"
	"strings"
)

// The namespaces of the suite (conformance/utils/suite/consts.go).
const (
	infra = "gateway-conformance-infra"
	web   = "gateway-conformance-web-backend"
)

// conformanceTest is what one test of the suite checks of status, from its
// .go file in sigs.k8s.io/gateway-api/conformance/tests.
type conformanceTest struct {
	name     string // the test's ShortName
	manifest string // its manifest file
	// bump is re-applied at generation 2 after a first translation (the
	// suite's observedGeneration tests change the object).
	bump *objectRef
	// extra holds, as YAML, the objects the test's code creates; they are
	// newer than the manifests' objects.
	extra  string
	checks []check
	// pending says which gatewire feature the test waits for, when gatewire
	// does not meet it yet; a pending test's mismatches are reported, not
	// failed.
	pending string
}

var (
	accepted         = cond{"Accepted", "True", "Accepted"}
	resolvedRefsTrue = cond{"ResolvedRefs", "True", "ResolvedRefs"}
)

func notAccepted(reason string) cond     { return cond{"Accepted", "False", reason} }
func refsNotResolved(reason string) cond { return cond{"ResolvedRefs", "False", reason} }

// conformanceTests are the tests of the suite whose expectations are status
// conditions (what an offline translation can show), in the suite's order of
// files.
var conformanceTests = append(append(backendTLSPolicyTests(), listenerSetTests()...), []conformanceTest{
	{name: "GatewayClassObservedGenerationBump", manifest: "tests/gatewayclass-observed-generation-bump.yaml",
		bump: &objectRef{"GatewayClass", "", "gatewayclass-observed-generation-bump"},
		checks: []check{
			classCondition("gatewayclass-observed-generation-bump", cond{"Accepted", "", ""}),
			latestGeneration(objectRef{"GatewayClass", "", "gatewayclass-observed-generation-bump"}),
		}},
	{name: "GatewayInvalidRouteKind", manifest: "tests/gateway-invalid-route-kind.yaml", checks: []check{
		gatewayListeners(nn(infra, "gateway-only-invalid-route-kind"),
			listener{name: "http", conds: []cond{refsNotResolved("InvalidRouteKinds")}}),
		gatewayListeners(nn(infra, "gateway-supported-and-invalid-route-kind"),
			listener{name: "http", kinds: []string{"HTTPRoute"}, conds: []cond{refsNotResolved("InvalidRouteKinds")}}),
	}},
	{name: "GatewayInvalidFrontendClientCertificateValidation", manifest: "tests/gateway-with-invalid-clientcertificate-validation.yaml", checks: []check{
		listenerConditions(nn(infra, "gateway-with-invalid-client-cert-validation"), "https",
			cond{"ResolvedRefs", "True", ""}, cond{"Accepted", "True", ""}, cond{"Programmed", "True", ""}),
		listenerConditions(nn(infra, "gateway-with-invalid-client-cert-validation"), "https-unresolved",
			refsNotResolved("InvalidCACertificateRef"), notAccepted("NoValidCACertificate"), cond{"Programmed", "False", ""}),
		listenerConditions(nn(infra, "gateway-with-invalid-client-cert-validation"), "https-invalid-kind",
			refsNotResolved("InvalidCACertificateKind"), notAccepted("NoValidCACertificate"), cond{"Programmed", "False", ""}),
		listenerConditions(nn(infra, "gateway-with-invalid-client-cert-validation"), "https-grant-missing",
			refsNotResolved("RefNotPermitted"), notAccepted("NoValidCACertificate"), cond{"Programmed", "False", ""}),
	}},
	{name: "GatewayInvalidTLSBackendConfiguration", manifest: "tests/gateway-invalid-tls-backend-configuration.yaml",
		checks: invalidBackendClientCertificate()},
	{name: "GatewayInvalidTLSConfiguration", manifest: "tests/gateway-invalid-tls-configuration.yaml", checks: invalidCertificate(
		"gateway-certificate-nonexistent-secret", "gateway-certificate-unsupported-group",
		"gateway-certificate-unsupported-kind", "gateway-certificate-malformed-secret")},
	{name: "GatewayListenerUnsupportedProtocol", manifest: "tests/gateway-invalid-listeners-unsupported-protocol.yaml", checks: []check{
		latestGeneration(objectRef{"Gateway", infra, "gateway-only-unsupported-protocols"}),
		gatewayCondition(nn(infra, "gateway-only-unsupported-protocols"), notAccepted("ListenersNotValid")),
		gatewayListeners(nn(infra, "gateway-only-unsupported-protocols"),
			listener{name: "invalid", conds: []cond{notAccepted("UnsupportedProtocol")}}),
		gatewayCondition(nn(infra, "gateway-supported-and-unsupported-protocols"), cond{"Accepted", "True", "ListenersNotValid"}),
		gatewayListeners(nn(infra, "gateway-supported-and-unsupported-protocols"),
			listener{name: "http", kinds: []string{"HTTPRoute"}, conds: []cond{accepted}},
			listener{name: "invalid", conds: []cond{notAccepted("UnsupportedProtocol")}}),
	}},
	{name: "GatewayObservedGenerationBump", manifest: "tests/gateway-observed-generation-bump.yaml",
		bump:   &objectRef{"Gateway", infra, "gateway-observed-generation-bump"},
		checks: []check{latestGeneration(objectRef{"Gateway", infra, "gateway-observed-generation-bump"})}},
	{name: "GatewaySecretInvalidReferenceGrant", manifest: "tests/gateway-secret-invalid-reference-grant.yaml", checks: []check{
		gatewayListeners(nn(infra, "gateway-secret-invalid-reference-grant"),
			listener{name: "https", kinds: []string{"HTTPRoute"}, conds: []cond{refsNotResolved("RefNotPermitted")}}),
	}},
	{name: "GatewaySecretMissingReferenceGrant", manifest: "tests/gateway-secret-missing-reference-grant.yaml", checks: []check{
		gatewayListeners(nn(infra, "gateway-secret-missing-reference-grant"),
			listener{name: "https", kinds: []string{"HTTPRoute"}, conds: []cond{refsNotResolved("RefNotPermitted")}}),
	}},
	{name: "GatewaySecretReferenceGrantAllInNamespace", manifest: "tests/gateway-secret-reference-grant-all-in-namespace.yaml", checks: []check{
		gatewayListeners(nn(infra, "gateway-secret-reference-grant-all-in-namespace"),
			listener{name: "https", kinds: []string{"HTTPRoute"}, conds: []cond{{"Programmed", "True", "Programmed"}, {"ResolvedRefs", "True", ""}}}),
	}},
	{name: "GatewaySecretReferenceGrantSpecific", manifest: "tests/gateway-secret-reference-grant-specific.yaml", checks: []check{
		gatewayListeners(nn(infra, "gateway-secret-reference-grant-specific"),
			listener{name: "https", kinds: []string{"HTTPRoute"}, conds: []cond{{"Programmed", "True", "Programmed"}, {"ResolvedRefs", "True", ""}}}),
	}},
	{name: "GatewayWithAttachedRoutes", manifest: "tests/gateway-with-attached-routes.yaml", checks: []check{
		gatewayListeners(nn(infra, "gateway-with-one-attached-route"),
			listener{name: "http", kinds: []string{"HTTPRoute"}, attached: 1, conds: []cond{{"Accepted", "True", ""}, {"ResolvedRefs", "True", ""}}}),
		gatewayListeners(nn(infra, "gateway-with-two-attached-routes"),
			listener{name: "http", kinds: []string{"HTTPRoute"}, attached: 2, conds: []cond{{"Accepted", "True", ""}, {"ResolvedRefs", "True", ""}}}),
		routeCondition("HTTPRoute", nn(infra, "http-route-not-accepted"), nn(infra, "gateway-with-two-attached-routes"), notAccepted("NoMatchingListenerHostname")),
		gatewayListeners(nn(infra, "unresolved-gateway-with-one-attached-unresolved-route"),
			listener{name: "tls", kinds: []string{"HTTPRoute"}, attached: 1, conds: []cond{{"Programmed", "False", ""}, {"ResolvedRefs", "False", ""}}}),
		routeCondition("HTTPRoute", nn(infra, "http-route-4"), nn(infra, "unresolved-gateway-with-one-attached-unresolved-route"), cond{"ResolvedRefs", "False", ""}),
	}},
	{name: "GatewayWithAttachedRoutesWithPort8080", manifest: "tests/gateway-with-attached-routes-with-port-8080.yaml", checks: []check{
		gatewayListeners(nn(infra, "gateway-with-two-listeners-and-one-attached-route"),
			listener{name: "http-unattached", kinds: []string{"HTTPRoute"}, attached: 0, conds: []cond{{"Accepted", "True", ""}, {"ResolvedRefs", "True", ""}}},
			listener{name: "http", kinds: []string{"HTTPRoute"}, attached: 1, conds: []cond{{"Accepted", "True", ""}, {"ResolvedRefs", "True", ""}}}),
	}},
	{name: "HTTPRouteDisallowedKind", manifest: "tests/httproute-disallowed-kind.yaml", checks: []check{
		routeCondition("HTTPRoute", nn(infra, "disallowed-kind"), nn(infra, "tlsroutes-only"), resolvedRefsTrue),
		routeCondition("HTTPRoute", nn(infra, "disallowed-kind"), nn(infra, "tlsroutes-only"), notAccepted("NotAllowedByListeners")),
		routeNoAcceptedParents("HTTPRoute", nn(infra, "disallowed-kind")),
		gatewayZeroRoutes(nn(infra, "tlsroutes-only")),
	}},
	{name: "HTTPRouteInvalidBackendRefUnknownKind", manifest: "tests/httproute-invalid-backendref-unknown-kind.yaml", checks: []check{
		routesAccepted("HTTPRoute", nn(infra, "same-namespace"), nil, nn(infra, "invalid-backend-ref-unknown-kind")),
		routeCondition("HTTPRoute", nn(infra, "invalid-backend-ref-unknown-kind"), nn(infra, "same-namespace"), refsNotResolved("InvalidKind")),
	}},
	{name: "HTTPRouteInvalidCrossNamespaceBackendRef", manifest: "tests/httproute-invalid-cross-namespace-backend-ref.yaml", checks: []check{
		routesAccepted("HTTPRoute", nn(infra, "same-namespace"), nil, nn(infra, "invalid-cross-namespace-backend-ref")),
		routeCondition("HTTPRoute", nn(infra, "invalid-cross-namespace-backend-ref"), nn(infra, "same-namespace"), refsNotResolved("RefNotPermitted")),
	}},
	{name: "HTTPRouteInvalidCrossNamespaceParentRef", manifest: "tests/httproute-invalid-cross-namespace-parent-ref.yaml", checks: []check{
		routeCondition("HTTPRoute", nn(web, "invalid-cross-namespace-parent-ref"), nn(infra, "same-namespace"), resolvedRefsTrue),
		routeCondition("HTTPRoute", nn(web, "invalid-cross-namespace-parent-ref"), nn(infra, "same-namespace"), notAccepted("NotAllowedByListeners")),
		routeNoAcceptedParents("HTTPRoute", nn(web, "invalid-cross-namespace-parent-ref")),
		gatewayZeroRoutes(nn(infra, "same-namespace")),
	}},
	{name: "HTTPRouteInvalidParentRefNotMatchingListenerPort", manifest: "tests/httproute-invalid-parentref-not-matching-listener-port.yaml", checks: []check{
		routeCondition("HTTPRoute", nn(infra, "httproute-listener-not-matching-route-port"), nn(infra, "same-namespace"), resolvedRefsTrue),
		routeCondition("HTTPRoute", nn(infra, "httproute-listener-not-matching-route-port"), nn(infra, "same-namespace"), notAccepted("NoMatchingParent")),
		routeNoAcceptedParents("HTTPRoute", nn(infra, "httproute-listener-not-matching-route-port")),
		gatewayZeroRoutes(nn(infra, "same-namespace")),
	}},
	{name: "HTTPRouteInvalidParentRefNotMatchingSectionName", manifest: "tests/httproute-invalid-parentref-not-matching-section-name.yaml", checks: []check{
		routeCondition("HTTPRoute", nn(infra, "httproute-listener-not-matching-section-name"), nn(infra, "same-namespace"), notAccepted("NoMatchingParent")),
		routeNoAcceptedParents("HTTPRoute", nn(infra, "httproute-listener-not-matching-section-name")),
		gatewayZeroRoutes(nn(infra, "same-namespace")),
	}},
	{name: "HTTPRouteInvalidParentRefSectionNameNotMatchingPort", manifest: "tests/httproute-invalid-parentref-section-name-not-matching-port.yaml", checks: []check{
		routeCondition("HTTPRoute", nn(infra, "httproute-listener-section-name-not-matching-port"), nn(infra, "gateway-with-one-not-matching-port-and-section-name-route"), notAccepted("NoMatchingParent")),
		routeNoAcceptedParents("HTTPRoute", nn(infra, "httproute-listener-section-name-not-matching-port")),
		gatewayZeroRoutes(nn(infra, "gateway-with-one-not-matching-port-and-section-name-route")),
	}},
	{name: "HTTPRouteInvalidReferenceGrant", manifest: "tests/httproute-invalid-reference-grant.yaml", checks: []check{
		routesAccepted("HTTPRoute", nn(infra, "same-namespace"), nil, nn(infra, "reference-grant")),
		routeCondition("HTTPRoute", nn(infra, "reference-grant"), nn(infra, "same-namespace"), refsNotResolved("RefNotPermitted")),
	}},
	{name: "HTTPRouteObservedGenerationBump", manifest: "tests/httproute-observed-generation-bump.yaml",
		bump: &objectRef{"HTTPRoute", infra, "observed-generation-bump"},
		checks: []check{
			latestGeneration(objectRef{"HTTPRoute", infra, "observed-generation-bump"}),
			routeCondition("HTTPRoute", nn(infra, "observed-generation-bump"), nn(infra, "same-namespace"), cond{"Accepted", "True", ""}),
			routeCondition("HTTPRoute", nn(infra, "observed-generation-bump"), nn(infra, "same-namespace"), resolvedRefsTrue),
		}},
	{name: "HTTPRoutePartiallyInvalidViaInvalidReferenceGrant", manifest: "tests/httproute-partially-invalid-via-invalid-reference-grant.yaml", checks: []check{
		routesAccepted("HTTPRoute", nn(infra, "same-namespace"), nil, nn(infra, "invalid-reference-grant")),
		routeCondition("HTTPRoute", nn(infra, "invalid-reference-grant"), nn(infra, "same-namespace"), refsNotResolved("RefNotPermitted")),
	}},
	{name: "TCPRouteInvalidBackendRefNonexistent", manifest: "tests/tcproute-invalid-backendref-nonexistent.yaml", checks: []check{
		routeCondition("TCPRoute", nn(infra, "tcp-route-invalid-backend-ref-nonexistent"), nn(infra, "tcp-gateway-invalid-backend"), refsNotResolved("BackendNotFound")),
	}},
	{name: "TCPRouteInvalidCrossNamespaceBackendRef", manifest: "tests/tcproute-invalid-cross-namespace-backend-ref.yaml", checks: []check{
		routesAccepted("TCPRoute", nn(infra, "tcp-invalid-cross-namespace-backend-ref-gateway"), []string{"tcp"}, nn(infra, "tcp-invalid-cross-namespace-backend-ref")),
		routeCondition("TCPRoute", nn(infra, "tcp-invalid-cross-namespace-backend-ref"), nn(infra, "tcp-invalid-cross-namespace-backend-ref-gateway"), refsNotResolved("RefNotPermitted")),
	}},
	{name: "TCPRouteInvalidNonTCPListener", manifest: "tests/tcproute-invalid-non-tcp-listener.yaml", checks: []check{
		routeCondition("TCPRoute", nn(infra, "tcp-route"), nn(infra, "tcp-mixed-protocol-gateway"), notAccepted("NotAllowedByListeners")),
		gatewayZeroRoutes(nn(infra, "tcp-mixed-protocol-gateway")),
	}},
	{name: "TLSRouteInvalidNoMatchingListener", manifest: "tests/tlsroute-invalid-no-matching-listener.yaml", checks: []check{
		routeCondition("TLSRoute", nn(infra, "tlsroute-not-allowed-protocol-http"), nn(infra, "gateway-tlsroute-http-only"), notAccepted("NotAllowedByListeners")),
		routeCondition("TLSRoute", nn(infra, "tlsroute-not-allowed-protocol-https"), nn(infra, "gateway-tlsroute-https-only"), notAccepted("NotAllowedByListeners")),
		routeCondition("TLSRoute", nn(infra, "tlsroute-no-matching-section-name"), nn(infra, "gateway-tlsroute-tls-passthrough-only"), notAccepted("NoMatchingParent")),
		routeNoAcceptedParents("TLSRoute", nn(infra, "tlsroute-not-allowed-protocol-http")),
		routeNoAcceptedParents("TLSRoute", nn(infra, "tlsroute-not-allowed-protocol-https")),
		routeNoAcceptedParents("TLSRoute", nn(infra, "tlsroute-no-matching-section-name")),
		gatewayZeroRoutes(nn(infra, "gateway-tlsroute-http-only")),
		gatewayZeroRoutes(nn(infra, "gateway-tlsroute-https-only")),
	}},
	{name: "TLSRouteInvalidNoMatchingListenerHostname", manifest: "tests/tlsroute-invalid-no-matching-listener-hostname.yaml", checks: []check{
		routeCondition("TLSRoute", nn(infra, "tlsroute-hostname-mismatch-1"), nn(infra, "gateway-tls-exact-hostname"), notAccepted("NoMatchingListenerHostname")),
		routeCondition("TLSRoute", nn(infra, "tlsroute-hostname-mismatch-2"), nn(infra, "gateway-tls-wildcard-hostname"), notAccepted("NoMatchingListenerHostname")),
		routeNoAcceptedParents("TLSRoute", nn(infra, "tlsroute-hostname-mismatch-1")),
		routeNoAcceptedParents("TLSRoute", nn(infra, "tlsroute-hostname-mismatch-2")),
		gatewayZeroRoutes(nn(infra, "gateway-tls-exact-hostname")),
		gatewayZeroRoutes(nn(infra, "gateway-tls-wildcard-hostname")),
	}},
	{name: "TLSRouteInvalidReferenceGrant", manifest: "tests/tlsroute-invalid-reference-grant.yaml", checks: []check{
		routesAccepted("TLSRoute", nn(infra, "gateway-tlsroute-referencegrant"), nil, nn(infra, "gateway-conformance-infra-test")),
		routeCondition("TLSRoute", nn(infra, "gateway-conformance-infra-test"), nn(infra, "gateway-tlsroute-referencegrant"), refsNotResolved("RefNotPermitted")),
	}},
	// The suite checks ProtocolConflict only for implementations without
	// TLSRouteModeMixed; gatewire supports Terminate and Passthrough
	// listeners on one port (one filter chain per SNI name), so both are
	// accepted.
	{name: "TLSRouteListenerMixedTerminationNotSupported", manifest: "tests/tlsroute-listener-mixed-termination-not-supported.yaml", checks: []check{
		gatewayListeners(nn(infra, "gateway-tlsroute-mixed-termination-not-supported"),
			listener{name: "tls-terminate", kinds: []string{"TLSRoute"}, conds: []cond{accepted}},
			listener{name: "tls-passthrough", kinds: []string{"TLSRoute"}, conds: []cond{accepted}}),
	}},
	{name: "TLSRouteListenerTerminateSupportedKinds", manifest: "tests/tlsroute-listener-terminate-supported-kinds.yaml", checks: []check{
		gatewayListeners(nn(infra, "gateway-tlsroute-terminate-supported"),
			listener{name: "tls-terminate", kinds: []string{"TLSRoute"}, conds: []cond{accepted}}),
	}},
	{name: "TLSRouteListenerPassthroughSupportedKinds", manifest: "tests/tlsroute-listener-passthrough-supported-kinds.yaml", checks: []check{
		gatewayListeners(nn(infra, "gateway-tlsroute-passthrough-supported-kind"),
			listener{name: "tls-passthrough", kinds: []string{"TLSRoute"}, conds: []cond{refsNotResolved("InvalidRouteKinds")}}),
	}},
	{name: "UDPRouteMultipleRoutesAttachment", manifest: "tests/udproute-multiple-routes-attachment.yaml", extra: `
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: udproute-attach-newer, namespace: gateway-conformance-infra, creationTimestamp: "1970-01-01T00:00:01Z"}
spec:
  parentRefs: [{name: udp-multi-route-attach-gateway, sectionName: udp}]
  rules: [{backendRefs: [{name: udp-attach-backend-2, port: 8080}]}]
`, checks: []check{
		routesAccepted("UDPRoute", nn(infra, "udp-multi-route-attach-gateway"), []string{"udp"}, nn(infra, "udproute-attach-older")),
		routeCondition("UDPRoute", nn(infra, "udproute-attach-older"), nn(infra, "udp-multi-route-attach-gateway"), accepted),
		routeCondition("UDPRoute", nn(infra, "udproute-attach-newer"), nn(infra, "udp-multi-route-attach-gateway"), accepted),
		gatewayListeners(nn(infra, "udp-multi-route-attach-gateway"),
			listener{name: "udp", kinds: []string{"UDPRoute"}, attached: 2, conds: []cond{accepted}}),
	}},
	{name: "UDPRouteInvalidBackendRefNonexistent", manifest: "tests/udproute-invalid-backendref-nonexistent.yaml", checks: []check{
		routeCondition("UDPRoute", nn(infra, "udp-route-invalid-backend-ref-nonexistent"), nn(infra, "udp-gateway-invalid-backend"), refsNotResolved("BackendNotFound")),
	}},
	{name: "UDPRouteNotAllowedByListeners", manifest: "tests/udproute-not-allowed-by-listeners.yaml", checks: []check{
		routeCondition("UDPRoute", nn(infra, "udproute-not-allowed-by-listeners"), nn(infra, "udproute-tls-only-gateway"), notAccepted("NotAllowedByListeners")),
		gatewayZeroRoutes(nn(infra, "udproute-tls-only-gateway")),
	}},
}...)

// invalidBackendClientCertificate is GatewayInvalidTLSBackendConfiguration's
// expectation for each of its Gateways: the latest generation, ResolvedRefs
// False with the reason of its broken reference, and still Accepted.
func invalidBackendClientCertificate() []check {
	var out []check
	for gw, reason := range map[string]string{
		"gateway-client-certificate-nonexistent-secret":      "InvalidClientCertificateRef",
		"gateway-client-certificate-unsupported-group":       "InvalidClientCertificateRef",
		"gateway-client-certificate-unsupported-kind":        "InvalidClientCertificateRef",
		"gateway-client-certificate-malformed-secret":        "InvalidClientCertificateRef",
		"gateway-client-certificate-missing-reference-grant": "RefNotPermitted",
	} {
		out = append(out, latestGeneration(objectRef{"Gateway", infra, gw}),
			gatewayCondition(nn(infra, gw), refsNotResolved(reason)),
			gatewayCondition(nn(infra, gw), accepted))
	}
	slices.SortFunc(out, func(a, b check) int { return strings.Compare(a.what, b.what) })
	return out
}

// invalidCertificate is GatewayInvalidTLSConfiguration's expectation for
// each of its Gateways: one https listener, ResolvedRefs False with reason
// InvalidCertificateRef.
func invalidCertificate(gateways ...string) []check {
	var out []check
	for _, gw := range gateways {
		out = append(out, gatewayListeners(nn(infra, gw),
			listener{name: "https", kinds: []string{"HTTPRoute"}, conds: []cond{refsNotResolved("InvalidCertificateRef")}}))
	}
	return out
}

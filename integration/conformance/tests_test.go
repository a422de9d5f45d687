package conformance

import (
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/config"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// statusTests are the tests of the suite run here, one per line: each checks
// status only, and sends no HTTP, gRPC, TLS, TCP or UDP traffic (its .go file
// in conformance/tests calls no http.MakeRequest…, grpc…, tls.Make…, tcp…,
// udp… nor the suite's RoundTripper).
//
// Status-only tests that are not run:
//
//   - GatewayStaticAddresses: gatewire binds no address of the user's
//     choosing (a Gateway gets its Service's addresses; a spec.addresses
//     value makes it not Programmed, AddressNotUsable).
//
// Tests that look at status only but do send traffic (UDPRoute,
// UDPRouteMultipleRoutesAttachment, TLSRouteInvalidBackendRefNonexistent,
// TLSRouteInvalidBackendRefUnknownKind, and of BackendTLSPolicy all but
// BackendTLSPolicyObservedGenerationBump: BackendTLSPolicyConflictResolution,
// BackendTLSPolicyInvalidCACertificateRef, BackendTLSPolicyInvalidKind,
// BackendTLSPolicySANValidation, ...) need an Envoy and are not run.
var statusTests = []string{
	"GatewayClassObservedGenerationBump",
	"GatewayInfrastructureMetadata",
	"GatewayInvalidParametersRef",
	"GatewayInvalidRouteKind",
	"GatewayInvalidTLSConfiguration",
	"GatewayListenerUnsupportedProtocol",
	"GatewayModifyListeners",
	"GatewayObservedGenerationBump",
	"GatewayOptionalAddressValue",
	"GatewaySecretInvalidReferenceGrant",
	"GatewaySecretMissingReferenceGrant",
	"GatewaySecretReferenceGrantAllInNamespace",
	"GatewaySecretReferenceGrantSpecific",
	"GatewayWithAttachedRoutes",
	"GatewayWithAttachedRoutesWithPort8080",
	"GatewayInvalidFrontendClientCertificateValidation",
	"GatewayInvalidTLSBackendConfiguration",
	"HTTPRouteDisallowedKind",
	"HTTPRouteInvalidCrossNamespaceParentRef",
	"HTTPRouteInvalidParentRefNotMatchingListenerPort",
	"HTTPRouteInvalidParentRefNotMatchingSectionName",
	"HTTPRouteInvalidParentRefSectionNameNotMatchingPort",
	"HTTPRouteObservedGenerationBump",
	"TCPRouteInvalidBackendRefNonexistent",
	"TCPRouteInvalidCrossNamespaceBackendRef",
	"TCPRouteInvalidNonTCPListener",
	"TLSRouteInvalidNoMatchingListener",
	"TLSRouteInvalidNoMatchingListenerHostname",
	"TLSRouteInvalidReferenceGrant",
	"TLSRouteListenerMixedTerminationNotSupported", // returns at once: gatewire supports mixed termination
	"TLSRouteListenerPassthroughSupportedKinds",
	"TLSRouteListenerTerminateNotSupported", // returns at once: gatewire supports mode Terminate
	"TLSRouteListenerTerminateSupportedKinds",
	"UDPRouteInvalidBackendRefNonexistent",
	"UDPRouteInvalidCrossNamespaceBackendRef",
	"UDPRouteNotAllowedByListeners",
	"BackendTLSPolicyObservedGenerationBump",
	"ListenerSetAllowedNamespaceNone",
	"ListenerSetAllowedNamespaceSame",
	"ListenerSetAllowedNamespaceSelector",
	"ListenerSetAllowedRoutesSupportedKinds",
	"ListenerSetDefaultNotAllowed",
	"ListenerSetHostnameConflict",
	"ListenerSetProtocolConflict",
	"ListenerSetReferenceGrant",
	"ListenerSetRouteStatusScopedToParentRef",
}

// supportedFeatures are the features of the suite that gatewire supports
// (see the package doc of the translator's gatewayapi package).
var supportedFeatures = []features.FeatureName{
	features.SupportGateway,
	features.SupportGatewayPort8080,
	features.SupportGatewayAddressEmpty, // spec.addresses without a value get the Service's
	features.SupportGatewayInfrastructure,
	features.SupportGatewayBackendClientCertificate,
	features.SupportGatewayFrontendClientCertificateValidation,
	features.SupportGatewayFrontendClientCertificateValidationInsecureFallback,
	features.SupportReferenceGrant,
	features.SupportHTTPRoute,
	features.SupportHTTPRouteDestinationPortMatching,
	features.SupportHTTPRouteParentRefPort,
	features.SupportGRPCRoute,
	features.SupportTLSRoute,
	features.SupportTLSRouteModeTerminate,
	features.SupportTLSRouteModeMixed, // Terminate and Passthrough listeners share a port, by SNI
	features.SupportTCPRoute,
	features.SupportUDPRoute,
	features.SupportBackendTLSPolicy,
	features.SupportListenerSet,
}

// skippedTests returns the names of the suite's tests that are not in
// statusTests; it fails t when statusTests names a test the suite lacks.
func skippedTests(t *testing.T) []string {
	t.Helper()
	var known, skip []string
	for _, ct := range tests.ConformanceTests {
		known = append(known, ct.ShortName)
		if !slices.Contains(statusTests, ct.ShortName) {
			skip = append(skip, ct.ShortName)
		}
	}
	for _, name := range statusTests {
		if !slices.Contains(known, name) {
			t.Fatalf("statusTests: the suite has no test %q", name)
		}
	}
	return skip
}

// timeouts are the suite's defaults, shortened: everything happens in one
// process on loopback, so a status that is not there in 30 seconds will not
// come. The namespaces get a minute: the first wait covers the start of
// every service.
func timeouts() config.TimeoutConfig {
	tc := config.DefaultTimeoutConfig()
	for _, d := range []*time.Duration{
		&tc.GatewayMustHaveAddress, &tc.GatewayMustHaveCondition, &tc.GatewayStatusMustHaveListeners,
		&tc.GatewayListenersMustHaveConditions, &tc.GWCMustBeAccepted, &tc.HTTPRouteMustNotHaveParents,
		&tc.HTTPRouteMustHaveCondition, &tc.TLSRouteMustHaveCondition, &tc.TCPRouteMustHaveCondition,
		&tc.UDPRouteMustHaveCondition, &tc.RouteMustHaveParents, &tc.LatestObservedGenerationSet,
		&tc.ListenerSetMustHaveCondition, &tc.ListenerSetListenersMustHaveConditions, &tc.DefaultTestTimeout,
	} {
		*d = min(*d, 30*time.Second)
	}
	tc.NamespacesMustBeReady = time.Minute
	return tc
}

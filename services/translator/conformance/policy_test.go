package conformance

import "k8s.io/apimachinery/pkg/types"

// policyCondition is the suite's BackendTLSPolicyMustHaveCondition: the
// policy's ancestor status for the Gateway gw has the condition want, and
// every ancestor's conditions its latest generation. A policy's ancestors
// are carried like a route's parents (the Gateway as parentRef).
func policyCondition(policy, gw types.NamespacedName, want cond) check {
	return routeCondition("BackendTLSPolicy", policy, gw, want)
}

// backendTLSPolicyTests are the BackendTLSPolicy tests of the suite; the
// table starts with them (the suite's order of files).
func backendTLSPolicyTests() []conformanceTest {
	gw, https := nn(infra, "same-namespace"), nn(infra, "same-namespace-with-https-listener")
	resolved := func(names ...string) []check {
		var out []check
		for _, name := range names {
			out = append(out, policyCondition(nn(infra, name), gw, accepted), policyCondition(nn(infra, name), gw, resolvedRefsTrue))
		}
		return out
	}
	return []conformanceTest{
		{name: "BackendTLSPolicy", manifest: "tests/backendtlspolicy.yaml", checks: append([]check{
			policyCondition(nn(infra, "normative-test"), https, accepted),
			policyCondition(nn(infra, "normative-test"), https, resolvedRefsTrue),
		}, resolved("normative-test", "host-mismatch", "cert-mismatch", "reconcile-test")...)},
		{name: "BackendTLSPolicyConflictResolution", manifest: "tests/backendtlspolicy-conflict-resolution.yaml", checks: []check{
			policyCondition(nn(infra, "conflicted-without-section-name-1"), gw, accepted),
			policyCondition(nn(infra, "conflicted-without-section-name-2"), gw, notAccepted("Conflicted")),
			policyCondition(nn(infra, "conflicted-with-section-name-1"), gw, accepted),
			policyCondition(nn(infra, "conflicted-with-section-name-2"), gw, notAccepted("Conflicted")),
			policyCondition(nn(infra, "not-conflicted-with-section-name"), gw, accepted),
			policyCondition(nn(infra, "not-conflicted-without-section-name"), gw, accepted),
		}},
		{name: "BackendTLSPolicyInvalidCACertificateRef", manifest: "tests/backendtlspolicy-invalid-ca-certificate-ref.yaml", checks: []check{
			policyCondition(nn(infra, "nonexistent-ca-certificate-ref"), gw, notAccepted("NoValidCACertificate")),
			policyCondition(nn(infra, "nonexistent-ca-certificate-ref"), gw, refsNotResolved("InvalidCACertificateRef")),
			policyCondition(nn(infra, "malformed-ca-certificate-ref"), gw, notAccepted("NoValidCACertificate")),
			policyCondition(nn(infra, "malformed-ca-certificate-ref"), gw, refsNotResolved("InvalidCACertificateRef")),
		}},
		{name: "BackendTLSPolicyInvalidKind", manifest: "tests/backendtlspolicy-invalid-kind.yaml", checks: []check{
			policyCondition(nn(infra, "invalid-kind"), gw, notAccepted("NoValidCACertificate")),
			policyCondition(nn(infra, "invalid-kind"), gw, refsNotResolved("InvalidKind")),
		}},
		{name: "BackendTLSPolicyObservedGenerationBump", manifest: "tests/backendtlspolicy-observed-generation-bump.yaml",
			bump: &objectRef{"BackendTLSPolicy", infra, "observed-generation-bump"},
			checks: []check{
				policyCondition(nn(infra, "observed-generation-bump"), gw, cond{"Accepted", "True", ""}),
				latestGeneration(objectRef{"BackendTLSPolicy", infra, "observed-generation-bump"}),
			}},
		{name: "BackendTLSPolicySANValidation", manifest: "tests/backendtlspolicy-san.yaml", checks: []check{
			policyCondition(nn(infra, "san-dns"), gw, accepted),
			policyCondition(nn(infra, "san-dns-mismatch"), gw, accepted),
			policyCondition(nn(infra, "san-uri"), gw, accepted),
			policyCondition(nn(infra, "san-uri-mismatch"), gw, accepted),
			policyCondition(nn(infra, "multiple-sans"), gw, accepted),
			policyCondition(nn(infra, "multiple-mismatch-sans"), gw, accepted),
		}},
	}
}

package gatewayapi

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// caCertificateKey is the ConfigMap key that holds CA certificates.
const caCertificateKey = "ca.crt"

// evaluatePolicy validates a BackendTLSPolicy and returns how its backends
// are reached: SNI validation.hostname, verified against
// validation.subjectAltNames or else the hostname, with the CA
// certificates of its ConfigMaps (key ca.crt, PEM) or the system's
// (wellKnownCACertificates: System). A policy none of whose CA references
// is valid is not accepted (NoValidCACertificate) and its backends refuse
// connections; one with some valid references uses those and reports the
// others in ResolvedRefs.
func (t *translation) evaluatePolicy(p *gatewayv1.BackendTLSPolicy) *policyState {
	v := &p.Spec.Validation
	st := &policyState{policy: p, tls: &irv1.BackendTLS{Sni: string(v.Hostname)}}
	invalid := func(format string, args ...any) *policyState {
		st.invalid = &problem{string(gatewayv1.PolicyReasonInvalid), fmt.Sprintf(format, args...)}
		st.tls = &irv1.BackendTLS{Sni: string(v.Hostname)}
		return st
	}
	switch {
	case v.Hostname == "":
		return invalid("validation.hostname is required")
	case len(v.CACertificateRefs) > 0 && v.WellKnownCACertificates != nil:
		return invalid("validation: caCertificateRefs and wellKnownCACertificates are mutually exclusive")
	case v.WellKnownCACertificates != nil && *v.WellKnownCACertificates != gatewayv1.WellKnownCACertificatesSystem:
		return invalid("validation.wellKnownCACertificates %q is not supported: use System", *v.WellKnownCACertificates)
	case v.WellKnownCACertificates != nil:
		st.tls.WellKnownCas = true
	case len(v.CACertificateRefs) == 0:
		return invalid("validation needs caCertificateRefs or wellKnownCACertificates")
	}
	for i, ref := range v.CACertificateRefs {
		pemData, p := caCertificates(t.idx, p.Namespace, ref)
		if p != nil {
			if st.unresolved == nil {
				st.unresolved = &problem{p.reason, fmt.Sprintf("validation.caCertificateRefs[%d]: %s", i, p.message)}
			}
			continue
		}
		st.tls.CaCertificates = append(st.tls.CaCertificates, pemData...)
	}
	if len(v.CACertificateRefs) > 0 && len(st.tls.CaCertificates) == 0 {
		st.invalid = &problem{string(gatewayv1.BackendTLSPolicyReasonNoValidCACertificate), "no caCertificateRef is valid"}
	}
	for _, san := range v.SubjectAltNames {
		switch san.Type {
		case gatewayv1.HostnameSubjectAltNameType:
			st.tls.SubjectAltNames = append(st.tls.SubjectAltNames, string(san.Hostname))
		case gatewayv1.URISubjectAltNameType:
			st.tls.SubjectAltNames = append(st.tls.SubjectAltNames, string(san.URI))
		default:
			return invalid("validation.subjectAltNames: type %q is not supported", san.Type)
		}
	}
	if len(st.tls.SubjectAltNames) == 0 {
		st.tls.SubjectAltNames = []string{string(v.Hostname)}
	}
	if st.invalid == nil {
		st.tls.ClientCertificate = t.clientCertificate
	}
	return st
}

// caCertificates returns the PEM CA certificates a caCertificateRef of a
// policy in namespace ns names: the ca.crt key of a ConfigMap of that
// namespace, every PEM block of which must be a certificate.
func caCertificates(r resources.Reader, ns string, ref gatewayv1.LocalObjectReference) ([]byte, *problem) {
	nn := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
	bad := func(format string, args ...any) ([]byte, *problem) {
		return nil, &problem{string(gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef), fmt.Sprintf(format, args...)}
	}
	if ref.Group != "" || ref.Kind != resources.KindConfigMap {
		return nil, &problem{string(gatewayv1.BackendTLSPolicyReasonInvalidKind),
			fmt.Sprintf("%s %s: only ConfigMaps hold CA certificates", groupKind(&ref.Group, &ref.Kind), nn)}
	}
	cm := r.ConfigMap(nn)
	if cm == nil {
		return bad("ConfigMap %s not found", nn)
	}
	data, ok := cm.Data[caCertificateKey]
	if !ok {
		return bad("ConfigMap %s has no key %s", nn, caCertificateKey)
	}
	if err := checkCertificates([]byte(data)); err != nil {
		return bad("ConfigMap %s: %s: %v", nn, caCertificateKey, err)
	}
	return []byte(data), nil
}

// checkCertificates checks that data holds PEM certificates and nothing
// else.
func checkCertificates(data []byte) error {
	n := 0
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("holds a PEM block of type %q, not CERTIFICATE", block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("certificate %d: %w", n+1, err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no PEM certificate")
	}
	return nil
}

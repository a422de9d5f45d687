package gatewayapi

import (
	"crypto/tls"
	"fmt"
	"slices"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// listenerTLS checks the tls section of a listener for its protocol and
// resolves the certificates of a listener that terminates TLS (HTTPS, and
// TLS in mode Terminate, the default). It returns the problem that keeps
// the listener from being accepted; problems with certificates are recorded
// in l.unresolved instead (the listener is accepted but not programmed when
// none of its certificates is valid).
func (t *gatewayCtx) listenerTLS(l *listener) *problem {
	cfg := l.spec.TLS
	passthrough := cfg != nil && cfg.Mode != nil && *cfg.Mode == gatewayv1.TLSModePassthrough
	switch l.spec.Protocol {
	case gatewayv1.HTTPSProtocolType:
		if passthrough {
			return &problem{string(gatewayv1.ListenerReasonUnsupportedValue),
				"tls.mode Passthrough is not allowed on an HTTPS listener: use protocol TLS"}
		}
	case gatewayv1.TLSProtocolType:
		if cfg == nil {
			return &problem{string(gatewayv1.ListenerReasonUnsupportedValue),
				"a TLS listener needs tls: mode Passthrough, or Terminate with certificateRefs"}
		}
		if passthrough {
			return nil
		}
	default:
		if cfg != nil {
			return &problem{string(gatewayv1.ListenerReasonUnsupportedValue),
				fmt.Sprintf("tls is not allowed on listeners of protocol %s", l.spec.Protocol)}
		}
		return nil
	}
	l.terminates = true
	if l.spec.Protocol == gatewayv1.HTTPSProtocolType {
		if l.frontend = t.frontendFor(l.spec.Port); l.frontend != nil {
			l.unresolved = l.frontend.unresolved
			if l.frontend.invalid != nil {
				return l.frontend.invalid
			}
		}
	}
	if cfg == nil || len(cfg.CertificateRefs) == 0 {
		l.unresolved = &problem{string(gatewayv1.ListenerReasonInvalidCertificateRef),
			fmt.Sprintf("tls.certificateRefs is required: this %s listener terminates TLS", l.spec.Protocol)}
		return nil
	}
	certs, p := t.certificates(t.declaredBy(l), cfg.CertificateRefs)
	l.certificates = certs
	if p != nil {
		l.unresolved = p
	}
	return nil
}

// certificates resolves the certificateRefs of an HTTPS listener: the SDS
// names of the valid ones, each kept in t.secrets, and the problem of the
// first invalid one.
func (t *gatewayCtx) certificates(from Reference, refs []gatewayv1.SecretObjectReference) ([]string, *problem) {
	var names []string
	var first *problem
	for i, ref := range refs {
		name, p := t.certificateFrom(from, ref)
		if p != nil {
			if first == nil {
				first = &problem{p.reason, fmt.Sprintf("tls.certificateRefs[%d]: %s", i, p.message)}
			}
			continue
		}
		if !contains(names, name) {
			names = append(names, name)
		}
	}
	return names, first
}

// certificate resolves one certificateRef to the SDS name of its Secret.
// Only kubernetes.io/tls Secrets whose tls.crt and tls.key hold a matching
// PEM certificate chain and key are valid. Messages name the Secret and
// what is wrong, never what it holds.
func (t *gatewayCtx) certificate(ref gatewayv1.SecretObjectReference) (string, *problem) {
	return t.certificateFrom(Reference{Group: gatewayv1.GroupName, Kind: resources.KindGateway, Namespace: t.name.Namespace}, ref)
}

// certificateFrom resolves a certificateRef of the object from (the
// Gateway or a ListenerSet), whose namespace is the reference's default.
func (t *gatewayCtx) certificateFrom(from Reference, ref gatewayv1.SecretObjectReference) (string, *problem) {
	nn := types.NamespacedName{Namespace: resources.NamespaceOr(ref.Namespace, from.Namespace), Name: string(ref.Name)}
	invalid := func(format string, args ...any) (string, *problem) {
		return "", &problem{string(gatewayv1.ListenerReasonInvalidCertificateRef), fmt.Sprintf(format, args...)}
	}
	if !resources.IsSecretRef(ref.Group, ref.Kind) {
		return invalid("%s %s: only Secrets hold certificates", groupKind(ref.Group, ref.Kind), nn)
	}
	if !t.allowed(from, Reference{Kind: resources.KindSecret, Namespace: nn.Namespace, Name: nn.Name}) {
		return "", &problem{string(gatewayv1.ListenerReasonRefNotPermitted),
			fmt.Sprintf("Secret %s: no ReferenceGrant in namespace %q allows it", nn, nn.Namespace)}
	}
	name := nn.String()
	if _, ok := t.secrets[name]; ok {
		return name, nil
	}
	s := t.idx.Secret(nn)
	switch {
	case s == nil:
		return invalid("Secret %s not found", nn)
	case s.Type != corev1.SecretTypeTLS:
		return invalid("Secret %s is of type %q, not %s", nn, s.Type, corev1.SecretTypeTLS)
	}
	chain, key := s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	if _, err := tls.X509KeyPair(chain, key); err != nil { // its errors never quote the data
		return invalid("Secret %s: %s and %s are not a matching PEM certificate and key: %v", nn, corev1.TLSCertKey, corev1.TLSPrivateKeyKey, err)
	}
	t.secrets[name] = &irv1.Secret{Name: name, CertificateChain: chain, PrivateKey: key}
	return name, nil
}

// servedSecrets returns the certificates the TLS terminations and TLS
// routes of the IR's listeners use, and the client certificate of its
// backends, sorted by name. Certificates of listeners that are not
// programmed are left out.
func (t *gatewayCtx) servedSecrets(ir *irv1.Gateway) []*irv1.Secret {
	var names []string
	add := func(secrets ...string) {
		for _, name := range secrets {
			if name != "" && !contains(names, name) {
				names = append(names, name)
			}
		}
	}
	for _, b := range ir.Backends {
		add(b.GetTls().GetClientCertificate())
	}
	for _, l := range ir.Listeners {
		for _, term := range l.GetTls() {
			add(term.GetSecrets()...)
		}
		for _, r := range l.GetTlsRoutes() {
			add(r.GetSecrets()...)
		}
	}
	slices.Sort(names)
	out := make([]*irv1.Secret, 0, len(names))
	for _, name := range names {
		out = append(out, t.secrets[name])
	}
	return out
}

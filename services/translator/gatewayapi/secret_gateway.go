package gatewayapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewire/gatewire/services/translator/resources"
)

// frontendValidation is how the HTTPS listeners of a port validate client
// certificates (Gateway spec.tls.frontend).
type frontendValidation struct {
	// ca is the PEM of the valid CA certificate references.
	ca []byte
	// optional is set in mode AllowInsecureFallback.
	optional bool
	// unresolved is the first invalid reference (listener ResolvedRefs
	// False); invalid is set when none is valid (listener Accepted False).
	unresolved, invalid *problem
}

// gatewayTLS resolves the Gateway's spec.tls: the client certificate its
// proxies present to backends that BackendTLSPolicies make them reach over
// TLS (a certificate reference like a listener's; a problem makes the
// Gateway's ResolvedRefs False), and the client certificate validation of
// its HTTPS listeners, by port (see frontendFor).
func (t *gatewayCtx) gatewayTLS() {
	tls := t.gateway.Spec.TLS
	if tls == nil {
		return
	}
	if tls.Backend != nil && tls.Backend.ClientCertificateRef != nil {
		name, p := t.certificate(*tls.Backend.ClientCertificateRef)
		if p != nil {
			reason := p.reason
			if reason == string(gatewayv1.ListenerReasonInvalidCertificateRef) {
				reason = string(gatewayv1.GatewayReasonInvalidClientCertificateRef)
			}
			t.gatewayUnresolved = &problem{reason, "spec.tls.backend.clientCertificateRef: " + p.message}
		}
		t.clientCertificate = name
	}
}

// insecureFrontend reports whether a client certificate validation of gw
// lets clients without a valid certificate connect (AllowInsecureFallback).
func insecureFrontend(gw *gatewayv1.Gateway) bool {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
		return false
	}
	f := gw.Spec.TLS.Frontend
	insecure := f.Default.Validation != nil && f.Default.Validation.Mode == gatewayv1.AllowInsecureFallback
	for _, pp := range f.PerPort {
		insecure = insecure || (pp.TLS.Validation != nil && pp.TLS.Validation.Mode == gatewayv1.AllowInsecureFallback)
	}
	return insecure
}

// frontendFor returns the client certificate validation of the HTTPS
// listeners of port: its spec.tls.frontend.perPort entry, else the
// default; nil when there is none.
func (t *gatewayCtx) frontendFor(port gatewayv1.PortNumber) *frontendValidation {
	tls := t.gateway.Spec.TLS
	if tls == nil || tls.Frontend == nil {
		return nil
	}
	cfg, field := &tls.Frontend.Default, "spec.tls.frontend.default"
	for i := range tls.Frontend.PerPort {
		if pp := &tls.Frontend.PerPort[i]; pp.Port == port {
			cfg, field = &pp.TLS, fmt.Sprintf("spec.tls.frontend.perPort[%d].tls", i)
		}
	}
	if cfg.Validation == nil {
		return nil
	}
	if fv, ok := t.frontends[field]; ok {
		return fv
	}
	fv := t.resolveFrontend(cfg.Validation, field+".validation")
	t.frontends[field] = fv
	return fv
}

// resolveFrontend resolves the CA certificate references of a client
// certificate validation: ConfigMaps with the PEM in ca.crt, in another
// namespace only when a ReferenceGrant there allows it.
func (t *gatewayCtx) resolveFrontend(v *gatewayv1.FrontendTLSValidation, field string) *frontendValidation {
	fv := &frontendValidation{optional: v.Mode == gatewayv1.AllowInsecureFallback}
	from := Reference{Group: gatewayv1.GroupName, Kind: resources.KindGateway, Namespace: t.name.Namespace}
	for i, ref := range v.CACertificateRefs {
		at := fmt.Sprintf("%s.caCertificateRefs[%d]", field, i)
		nn := types.NamespacedName{Namespace: resources.NamespaceOr(ref.Namespace, t.name.Namespace), Name: string(ref.Name)}
		var p *problem
		switch {
		case ref.Group != "" || ref.Kind != resources.KindConfigMap:
			p = &problem{string(gatewayv1.ListenerReasonInvalidCACertificateKind),
				fmt.Sprintf("%s: %s %s: only ConfigMaps hold CA certificates", at, groupKind(&ref.Group, &ref.Kind), nn)}
		case !t.allowed(from, Reference{Kind: resources.KindConfigMap, Namespace: nn.Namespace, Name: nn.Name}):
			p = &problem{string(gatewayv1.ListenerReasonRefNotPermitted),
				fmt.Sprintf("%s: ConfigMap %s: no ReferenceGrant in namespace %q allows it", at, nn, nn.Namespace)}
		default:
			var pemData []byte
			if pemData, p = caCertificates(t.idx, nn.Namespace, gatewayv1.LocalObjectReference{Kind: ref.Kind, Name: ref.Name}); p == nil {
				fv.ca = append(fv.ca, pemData...)
			} else {
				p = &problem{string(gatewayv1.ListenerReasonInvalidCACertificateRef), at + ": " + p.message}
			}
		}
		if p != nil && fv.unresolved == nil {
			fv.unresolved = p
		}
	}
	if len(fv.ca) == 0 {
		fv.invalid = &problem{string(gatewayv1.ListenerReasonNoValidCACertificate),
			field + ": no caCertificateRef is valid, so no client can be verified"}
	}
	return fv
}

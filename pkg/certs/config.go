package certs

import "fmt"

// XDSTransport is the part of the configuration of the connection between
// the Envoys and the xds service that the xds service and infra share:
// whether it is mTLS, and the trust domain of the SPIFFE IDs in the
// certificates. Both services embed it in their configuration
// (pkg/service.Load fills it from the environment), so that one pair of
// variables configures both sides, and gatewire standalone, which loads
// both, reads each once:
//
//	GATEWIRE_XDS_INSECURE  true: plaintext, no certificates (development only)
//	GATEWIRE_TRUST_DOMAIN  the trust domain; empty means DefaultTrustDomain
type XDSTransport struct {
	// XDSInsecure makes the xds service serve plaintext to any client,
	// unauthenticated (every gateway's configuration, private keys
	// included, to whoever reaches the port), infra write plaintext
	// bootstraps and issue no certificate.
	XDSInsecure bool `envconfig:"XDS_INSECURE" default:"false" desc:"development only: xDS in plaintext, without certificates or authentication: the xds service serves any client, infra writes plaintext bootstraps and issues no certificate (logged as a warning)"`
	// TrustDomain is the trust domain of the SPIFFE IDs of the gateways'
	// certificates; read it with [XDSTransport.Domain].
	TrustDomain string `envconfig:"TRUST_DOMAIN" default:"" desc:"trust domain of the SPIFFE IDs in gatewire's certificates (spiffe://<trust domain>/ns/<ns>/gateway/<name>); empty means gatewire.local"`
}

// Validate checks the trust domain, naming its variable.
func (t XDSTransport) Validate() error {
	if t.TrustDomain == "" {
		return nil
	}
	if err := CheckTrustDomain(t.TrustDomain); err != nil {
		return fmt.Errorf("GATEWIRE_TRUST_DOMAIN: %w", err)
	}
	return nil
}

// Domain is the trust domain: TrustDomain, or DefaultTrustDomain when it
// is empty.
func (t XDSTransport) Domain() string {
	if t.TrustDomain == "" {
		return DefaultTrustDomain
	}
	return t.TrustDomain
}

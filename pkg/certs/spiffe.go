package certs

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// DefaultTrustDomain is the trust domain of gatewire's SPIFFE IDs when the
// installation names none.
const DefaultTrustDomain = "gatewire.local"

// XDSService is the service name in the xds server's SPIFFE ID,
// spiffe://<trust domain>/gatewire/xds.
const XDSService = "xds"

var (
	// A trust domain is lower-case letters, digits, '.', '-' and '_' (the
	// SPIFFE ID specification).
	trustDomainRE = regexp.MustCompile(`^[a-z0-9._-]+$`)
	dnsLabelRE    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomain  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// CheckTrustDomain reports whether td is a SPIFFE trust domain.
func CheckTrustDomain(td string) error {
	if td == "" || len(td) > 255 || !trustDomainRE.MatchString(td) {
		return fmt.Errorf("trust domain %q: want lower-case letters, digits, '.', '-' and '_'", td)
	}
	return nil
}

// GatewayID is the identity of the Envoys of one gateway:
// spiffe://<trust domain>/ns/<namespace>/gateway/<name>.
type GatewayID struct {
	TrustDomain string
	Namespace   string
	Name        string
}

// Check reports whether the ID's parts are a trust domain, a Kubernetes
// namespace (a DNS label) and a Gateway name (a DNS subdomain).
func (id GatewayID) Check() error {
	if err := CheckTrustDomain(id.TrustDomain); err != nil {
		return err
	}
	if len(id.Namespace) > 63 || !dnsLabelRE.MatchString(id.Namespace) {
		return fmt.Errorf("gateway namespace %q is not a DNS label", id.Namespace)
	}
	if len(id.Name) > 253 || !dnsSubdomain.MatchString(id.Name) {
		return fmt.Errorf("gateway name %q is not a DNS subdomain", id.Name)
	}
	return nil
}

// URL is the ID as a URL, for a certificate's URI SANs.
func (id GatewayID) URL() *url.URL {
	return &url.URL{Scheme: "spiffe", Host: id.TrustDomain, Path: "/ns/" + id.Namespace + "/gateway/" + id.Name}
}

func (id GatewayID) String() string { return id.URL().String() }

// ParseGatewayID reads a gateway's SPIFFE ID.
func ParseGatewayID(uri string) (GatewayID, error) {
	td, segments, err := parseSPIFFE(uri)
	if err != nil {
		return GatewayID{}, err
	}
	if len(segments) != 4 || segments[0] != "ns" || segments[2] != "gateway" {
		return GatewayID{}, fmt.Errorf("SPIFFE ID %q: want spiffe://<trust domain>/ns/<namespace>/gateway/<name>", uri)
	}
	id := GatewayID{TrustDomain: td, Namespace: segments[1], Name: segments[3]}
	if err := id.Check(); err != nil {
		return GatewayID{}, fmt.Errorf("SPIFFE ID %q: %w", uri, err)
	}
	return id, nil
}

// ServiceID is the identity of one of gatewire's own services:
// spiffe://<trust domain>/gatewire/<name>.
type ServiceID struct {
	TrustDomain string
	Name        string
}

// URL is the ID as a URL, for a certificate's URI SANs.
func (id ServiceID) URL() *url.URL {
	return &url.URL{Scheme: "spiffe", Host: id.TrustDomain, Path: "/gatewire/" + id.Name}
}

func (id ServiceID) String() string { return id.URL().String() }

// parseSPIFFE splits a SPIFFE ID into its trust domain and path segments,
// refusing what the SPIFFE ID specification refuses: another scheme, a
// port, user info, a query, a fragment, empty, "." or ".." segments, and
// percent-encoding.
func parseSPIFFE(uri string) (string, []string, error) {
	if len(uri) > 2048 {
		return "", nil, fmt.Errorf("SPIFFE ID of %d bytes is longer than 2048", len(uri))
	}
	if strings.Contains(uri, "%") {
		return "", nil, fmt.Errorf("SPIFFE ID %q: percent-encoding is not allowed", uri)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", nil, fmt.Errorf("SPIFFE ID %q: %w", uri, err)
	}
	switch {
	case u.Scheme != "spiffe":
		return "", nil, fmt.Errorf("SPIFFE ID %q: scheme is not spiffe", uri)
	case u.User != nil || u.Port() != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return "", nil, fmt.Errorf("SPIFFE ID %q: no user, port, query or fragment allowed", uri)
	}
	if err := CheckTrustDomain(u.Host); err != nil {
		return "", nil, fmt.Errorf("SPIFFE ID %q: %w", uri, err)
	}
	path, ok := strings.CutPrefix(u.Path, "/")
	if !ok || path == "" {
		return "", nil, fmt.Errorf("SPIFFE ID %q has no path", uri)
	}
	segments := strings.Split(path, "/")
	for _, s := range segments {
		if s == "" || s == "." || s == ".." {
			return "", nil, fmt.Errorf("SPIFFE ID %q: empty, '.' or '..' path segment", uri)
		}
	}
	return u.Host, segments, nil
}

// ErrNoGateway: a certificate that names no gateway.
var ErrNoGateway = errors.New("certs: the certificate names no gateway")

// GatewayOf returns the gateway that a verified peer certificate names in
// its one gateway SPIFFE ID (spiffe://<trust domain>/ns/<ns>/gateway/<name>).
// It does not verify the certificate: call it on the leaf of a verified
// chain (tls.ConnectionState.VerifiedChains[0][0]). A certificate with no
// gateway ID fails with ErrNoGateway; one with two fails too. The trust
// domain is not checked here: the CA that verified the chain vouches for
// it; use [GatewayIDOf] to check it as well.
func GatewayOf(cert *x509.Certificate) (namespace, name string, err error) {
	id, err := gatewayIDOf(cert)
	if err != nil {
		return "", "", err
	}
	return id.Namespace, id.Name, nil
}

// GatewayIDOf is [GatewayOf] that also requires the ID to be in trustDomain.
func GatewayIDOf(cert *x509.Certificate, trustDomain string) (GatewayID, error) {
	id, err := gatewayIDOf(cert)
	if err != nil {
		return GatewayID{}, err
	}
	if id.TrustDomain != trustDomain {
		return GatewayID{}, fmt.Errorf("certs: %s is not in the trust domain %q", id, trustDomain)
	}
	return id, nil
}

func gatewayIDOf(cert *x509.Certificate) (GatewayID, error) {
	if cert == nil {
		return GatewayID{}, ErrNoGateway
	}
	var (
		found GatewayID
		n     int
	)
	for _, u := range cert.URIs {
		id, err := ParseGatewayID(u.String())
		if err != nil {
			continue
		}
		found, n = id, n+1
	}
	switch n {
	case 0:
		return GatewayID{}, fmt.Errorf("%w (subject %q)", ErrNoGateway, cert.Subject)
	case 1:
		return found, nil
	}
	return GatewayID{}, fmt.Errorf("certs: the certificate %q names %d gateways; want one", cert.Subject, n)
}

package certs

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Usage says what a certificate authenticates: a server, a client, or both
// (a NATS node, which is a server to clients and a client to its routes).
type Usage int

// The usages.
const (
	ServerAuth Usage = 1 << iota
	ClientAuth
)

func (u Usage) extKeyUsages() []x509.ExtKeyUsage {
	var out []x509.ExtKeyUsage
	if u&ServerAuth != 0 {
		out = append(out, x509.ExtKeyUsageServerAuth)
	}
	if u&ClientAuth != 0 {
		out = append(out, x509.ExtKeyUsageClientAuth)
	}
	return out
}

// Request is what a certificate names and may do.
type Request struct {
	// CommonName is the subject's common name, for people reading the
	// certificate; peers check the SANs.
	CommonName string
	// DNSNames, IPAddresses and URIs are the subject alternative names.
	DNSNames    []string
	IPAddresses []net.IP
	URIs        []*url.URL
	// Usage is ServerAuth, ClientAuth or both. Required.
	Usage Usage
	// Lifetime is how long the certificate is valid; 0 means
	// DefaultLifetime.
	Lifetime time.Duration
}

func (r Request) String() string {
	var names []string
	for _, u := range r.URIs {
		names = append(names, u.String())
	}
	names = append(names, r.DNSNames...)
	for _, ip := range r.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 {
		return fmt.Sprintf("%q", r.CommonName)
	}
	return fmt.Sprintf("%q (%s)", r.CommonName, strings.Join(names, ", "))
}

func (r Request) lifetime() time.Duration {
	if r.Lifetime == 0 {
		return DefaultLifetime
	}
	return r.Lifetime
}

// Check reports what is wrong with r.
func (r Request) Check() error {
	if r.Usage == 0 || r.Usage&^(ServerAuth|ClientAuth) != 0 {
		return fmt.Errorf("certs: request %s: usage %d: want ServerAuth, ClientAuth or both", r, r.Usage)
	}
	if len(r.DNSNames)+len(r.IPAddresses)+len(r.URIs) == 0 {
		return fmt.Errorf("certs: request %s names nothing: give DNS names, IP addresses or URIs", r)
	}
	if l := r.lifetime(); l < MinLifetime {
		return fmt.Errorf("certs: request %s: lifetime %s is shorter than %s", r, l, MinLifetime)
	}
	return nil
}

func (r Request) template(now time.Time) (*x509.Certificate, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: r.CommonName, Organization: []string{"gatewire"}},
		NotBefore:    now.Add(-backdate),
		NotAfter:     now.Add(r.lifetime()),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  r.Usage.extKeyUsages(),
		DNSNames:     slices.Clone(r.DNSNames),
		IPAddresses:  slices.Clone(r.IPAddresses),
		URIs:         slices.Clone(r.URIs),
	}, nil
}

// matches reports whether c names exactly what r names, with r's usages.
func (r Request) matches(c *x509.Certificate) error {
	if !slices.Equal(sorted(c.DNSNames), sorted(r.DNSNames)) {
		return fmt.Errorf("it names the DNS names %v, want %v", c.DNSNames, r.DNSNames)
	}
	if !slices.Equal(ipStrings(c.IPAddresses), ipStrings(r.IPAddresses)) {
		return fmt.Errorf("it names the IP addresses %v, want %v", c.IPAddresses, r.IPAddresses)
	}
	if !slices.Equal(uriStrings(c.URIs), uriStrings(r.URIs)) {
		return fmt.Errorf("it names the URIs %v, want %v", c.URIs, r.URIs)
	}
	if !slices.Equal(c.ExtKeyUsage, r.Usage.extKeyUsages()) {
		return fmt.Errorf("its extended key usages %v differ from %v", c.ExtKeyUsage, r.Usage.extKeyUsages())
	}
	return nil
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func ipStrings(ips []net.IP) []string {
	var out []string
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	slices.Sort(out)
	return out
}

func uriStrings(uris []*url.URL) []string {
	var out []string
	for _, u := range uris {
		out = append(out, u.String())
	}
	slices.Sort(out)
	return out
}

// GatewayRequest is the client certificate of the Envoys of a gateway: its
// SPIFFE ID as the only SAN, clientAuth only.
func GatewayRequest(id GatewayID, lifetime time.Duration) Request {
	return Request{
		CommonName: id.Namespace + "/" + id.Name,
		URIs:       []*url.URL{id.URL()},
		Usage:      ClientAuth,
		Lifetime:   lifetime,
	}
}

// XDSServerRequest is the certificate of the xds server: the SPIFFE ID
// spiffe://<trust domain>/gatewire/xds, the DNS names given (those of the xds
// Service), localhost, 127.0.0.1 and ::1; serverAuth only.
func XDSServerRequest(trustDomain string, dnsNames []string, lifetime time.Duration) Request {
	return Request{
		CommonName:  "gatewire xds",
		DNSNames:    appendUnique(slices.Clone(dnsNames), "localhost"),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1).To4(), net.IPv6loopback},
		URIs:        []*url.URL{ServiceID{TrustDomain: trustDomain, Name: XDSService}.URL()},
		Usage:       ServerAuth,
		Lifetime:    lifetime,
	}
}

// ServiceRequest is the certificate of one of gatewire's own services
// (spiffe://<trust domain>/gatewire/<name>) with usage and DNS names, for
// NATS: its nodes are servers to their clients and clients of their routes;
// the services are clients.
func ServiceRequest(id ServiceID, usage Usage, dnsNames []string, lifetime time.Duration) Request {
	return Request{
		CommonName: "gatewire " + id.Name,
		DNSNames:   slices.Clone(dnsNames),
		URIs:       []*url.URL{id.URL()},
		Usage:      usage,
		Lifetime:   lifetime,
	}
}

func appendUnique(s []string, v ...string) []string {
	for _, x := range v {
		if !slices.Contains(s, x) {
			s = append(s, x)
		}
	}
	return s
}

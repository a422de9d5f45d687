// Package certs is gatewire's certificate authority: it creates the CA,
// issues the certificates of the xds server, of every gateway's Envoys and of
// gatewire's own services, keeps them in a [Store] (PEM files in a folder, or
// a Kubernetes Secret with package kubesecret), renews them before they
// expire, and builds the [tls.Config] of a server or client that reloads its
// files when they change.
//
// # Keys and lifetimes
//
// Every key is ECDSA on P-256, stored as PKCS #8 PEM. Envoy (BoringSSL),
// gRPC-Go, nats-server and every Go TLS stack accept it; Ed25519 is left out
// because BoringSSL-based data planes and some gRPC stacks still refuse it
// in certificate chains. The CA lives long (10 years by default,
// [DefaultCALifetime]); leaves live short ([DefaultLifetime], 7 days) and are
// renewed once two thirds of their lifetime has passed ([RenewAt]), so a
// renewal that fails keeps being retried for days before anything expires.
//
// # Identities
//
// Identities are SPIFFE IDs in URI SANs, under a trust domain
// ([DefaultTrustDomain], gatewire.local):
//
//	spiffe://<trust domain>/ns/<namespace>/gateway/<name>   the Envoys (and proxyless clients) of a gateway
//	spiffe://<trust domain>/gatewire/<service>              gatewire's own services: xds, nats, ...
//
// A gateway certificate is a client certificate only (extended key usage
// clientAuth); the xds server's certificate is a server certificate only, so
// neither can stand in for the other. [GatewayOf] reads the gateway of a
// verified peer.
//
// # Files
//
// A bundle is three PEM files ([Files]): the certificate chain (leaf first),
// its private key (mode 0600) and the CA bundle that verifies peers. In a
// folder they are tls.crt, tls.key and ca.crt ([DirFiles]), the key names of
// a kubernetes.io/tls Secret, so a mounted Secret and a folder on a host
// look the same.
//
// # Rotation
//
// [ServerConfig] and [ClientConfig] read their files through a [Reloader]:
// each handshake uses the newest certificate and CA bundle, read again at
// most once per check interval (one second by default) and only replaced
// when the new files parse and the key matches the certificate. A file
// half written, or a certificate written before its key, leaves the previous
// pair in use until the next check. Connections already established are
// not touched: TLS 1.3 does not renegotiate, so rotation never drops one.
//
// Everything here is safe for concurrent use.
package certs

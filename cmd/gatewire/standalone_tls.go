package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/services/infra/issuer"
	"github.com/gatewire/gatewire/services/xds"
)

// defaultXDSAddress is where standalone serves xDS when
// GATEWIRE_XDS_ADDRESS is not set: loopback, like its bootstraps.
const defaultXDSAddress = "127.0.0.1:18000"

// xdsListener listens for the xds service. Unless GATEWIRE_XDS_INSECURE is
// true it serves mTLS: TLS 1.3, the xds server's certificate from the CA
// under the state folder (created, and the certificate issued, on first
// start), and a client certificate of that CA required of every client,
// which the Envoys of the bootstraps infra writes have. The listener
// reloads the certificate when it is renewed. The returned issuer, when
// not nil, keeps that certificate renewed; infra does it when it runs in
// this process.
func xdsListener(ctx context.Context, cfg *configs, log *slog.Logger) (net.Listener, *issuer.Issuer, error) {
	l, err := net.Listen("tcp", cfg.xds.Address)
	if err != nil {
		return nil, nil, fmt.Errorf("GATEWIRE_XDS_ADDRESS %s: %w", cfg.xds.Address, err)
	}
	if cfg.infra.XDSInsecure {
		log.Warn("GATEWIRE_XDS_INSECURE=true: xDS is served in plaintext to any client, every gateway's configuration and keys included; for local development only", "address", l.Addr().String())
		return l, nil, nil
	}
	tlsCfg, iss, err := xdsServerTLS(ctx, cfg)
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	return tls.NewListener(l, tlsCfg), iss, nil
}

// xdsServerTLS issues (or keeps) the xds server's certificate under the
// state folder and returns the server TLS configuration over its files.
func xdsServerTLS(ctx context.Context, cfg *configs) (*tls.Config, *issuer.Issuer, error) {
	ca, err := cfg.infra.HostCA(time.Now())
	if err != nil {
		return nil, nil, err
	}
	iss, err := cfg.infra.NewIssuer(ca, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, nil, err
	}
	files, err := cfg.infra.HostXDSFiles()
	if err != nil {
		return nil, nil, err
	}
	if err := iss.Server(ctx, certs.FileStore{Files: files}, cfg.infra.XDSCertNames()); err != nil {
		return nil, nil, err
	}
	tlsCfg, err := certs.ServerConfig(files)
	if err != nil {
		return nil, nil, err
	}
	return tlsCfg, iss, nil
}

// standaloneXDSAddress sets standalone's xds address to loopback unless
// GATEWIRE_XDS_ADDRESS says otherwise.
func standaloneXDSAddress(cfg *configs) {
	if _, set := os.LookupEnv("GATEWIRE_XDS_ADDRESS"); !set {
		cfg.xds.Address = defaultXDSAddress
	}
}

// newXDS is the xds service of standalone, on the listener of xdsListener;
// the issuer of its certificate renews it when infra does not run here.
func newXDS(ctx context.Context, cfg *configs, b *bus.Bus, log *slog.Logger) (*xds.Service, error) {
	l, iss, err := xdsListener(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	xs, err := xds.New(cfg.xds, b, log, xds.WithListener(l))
	if err != nil {
		l.Close()
		return nil, err
	}
	if iss != nil && !slices.Contains(cfg.standalone.services(), "infra") {
		go iss.Run(ctx, time.Minute)
	}
	return xs, nil
}

// caDirOf is the CA bundle clients of standalone's xds service trust, for
// its messages.
func caDirOf(cfg *configs) string {
	files, err := cfg.infra.HostXDSFiles()
	if err != nil {
		return "the state folder"
	}
	return files.CA
}

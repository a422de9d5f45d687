package main

import (
	"context"
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

// xdsFiles gives the xds service of standalone its TLS files. Unless
// GATEWIRE_XDS_INSECURE is true or GATEWIRE_XDS_TLS_CERT, _KEY and _CA
// name files of the operator's own, they are the xds server's certificate
// from the CA under the state folder (created, and the certificate
// issued, on first start), whose clients are the Envoys of the bootstraps
// infra writes. The xds service serves mTLS over them and reloads them
// when they are renewed. The returned issuer, when not nil, keeps that
// certificate renewed; infra does it when it runs in this process.
func xdsFiles(ctx context.Context, cfg *configs) (*issuer.Issuer, error) {
	t := &cfg.xds.TLS
	if t.XDSInsecure || t.CertFile != "" {
		return nil, nil
	}
	ca, err := cfg.infra.HostCA(time.Now())
	if err != nil {
		return nil, err
	}
	iss, err := cfg.infra.NewIssuer(ca, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	files, err := cfg.infra.HostXDSFiles()
	if err != nil {
		return nil, err
	}
	if err := iss.Server(ctx, certs.FileStore{Files: files}, cfg.infra.XDSCertNames()); err != nil {
		return nil, err
	}
	t.CertFile, t.KeyFile, t.CAFile = files.Cert, files.Key, files.CA
	return iss, nil
}

// standaloneXDSAddress sets standalone's xds address to loopback unless
// GATEWIRE_XDS_ADDRESS says otherwise.
func standaloneXDSAddress(cfg *configs) {
	if _, set := os.LookupEnv("GATEWIRE_XDS_ADDRESS"); !set {
		cfg.xds.Address = defaultXDSAddress
	}
}

// newXDS is the xds service of standalone, over the files of xdsFiles; the
// issuer of its certificate renews it when infra does not run here.
func newXDS(ctx context.Context, cfg *configs, b *bus.Bus, log *slog.Logger) (*xds.Service, error) {
	iss, err := xdsFiles(ctx, cfg)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", cfg.xds.Address)
	if err != nil {
		return nil, fmt.Errorf("GATEWIRE_XDS_ADDRESS %s: %w", cfg.xds.Address, err)
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
	if cfg.xds.CAFile != "" {
		return cfg.xds.CAFile
	}
	files, err := cfg.infra.HostXDSFiles()
	if err != nil {
		return "the state folder"
	}
	return files.CA
}

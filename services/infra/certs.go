package infra

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/services/infra/issuer"
)

// startTLS readies the certificates before the first gateway is applied:
// in kubernetes mode it reads (or creates) the CA Secret and gives the
// provisioner its issuer; in both modes it issues the xds server's
// certificate. It retries until it succeeds or ctx is done, so no
// bootstrap is written in plaintext by mistake. Nothing happens in the
// insecure mode.
func (s *Service) startTLS(ctx context.Context) error {
	if s.cfg.XDSInsecure {
		return nil
	}
	backoff := rewatchMin
	for {
		err := s.readyTLS(ctx)
		if err == nil {
			return nil
		}
		s.log.Error("certificates not ready", "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, rewatchMax)
	}
}

func (s *Service) readyTLS(ctx context.Context) error {
	if s.kube != nil && s.issuer == nil {
		ns := s.secretsNamespace
		store := s.kube.SecretStore(ns, orDefault(s.cfg.CASecret, DefaultCASecret), true)
		ca, created, err := certs.EnsureCA(ctx, store, "gatewire CA", 0, time.Now())
		if err != nil {
			return fmt.Errorf("GATEWIRE_INFRA_CA_SECRET: %w", err)
		}
		if created {
			s.log.Info("CA created", "store", store.String())
		}
		if s.issuer, err = s.cfg.NewIssuer(ca, s.log); err != nil {
			return err
		}
		s.kube.SetIssuer(s.issuer)
		s.xdsStore = s.kube.SecretStore(ns, orDefault(s.cfg.XDSTLSSecret, DefaultXDSTLSSecret), false)
	}
	if s.issuer == nil || s.xdsStore == nil {
		return errors.New("no certificate issuer")
	}
	return s.issuer.Server(ctx, s.xdsStore, s.cfg.XDSCertNames())
}

// newHostIssuer is the issuer of host mode, over the CA of its folder
// (created on first use), and the store of the xds server's certificate.
func newHostIssuer(cfg Config, s *Service) (*issuer.Issuer, error) {
	ca, err := cfg.HostCA(time.Now())
	if err != nil {
		return nil, err
	}
	iss, err := cfg.NewIssuer(ca, s.log)
	if err != nil {
		return nil, err
	}
	files, err := cfg.HostXDSFiles()
	if err != nil {
		return nil, err
	}
	s.issuer, s.xdsStore = iss, certs.FileStore{Files: files}
	return iss, nil
}

// Package issuer issues and renews the certificates the infra service
// provisions: the client certificate of every gateway's Envoys and the xds
// server's certificate, from gatewire's CA (package certs).
//
// The provisioners (packages host and kube) hand it a store per gateway (a
// folder next to the bootstrap, or the gateway's Secret) each time they
// apply the gateway; the issuer remembers the bundle it issued, saves it to
// that store every time (a no-op when the store already holds it: the files
// are compared, the Secret is applied server-side), and a new one once two
// thirds of its lifetime have passed ([Issuer.Renew], called every minute
// by the service). A store the issuer may not read (a Secret in a
// namespace where infra has no right to get Secrets) is wrapped with
// certs.Remembered: after a restart its certificates are issued anew.
//
// An Issuer is safe for concurrent use.
package issuer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/gatewire/gatewire/pkg/certs"
)

// Options configure an Issuer.
type Options struct {
	// CA signs every certificate. Required.
	CA *certs.CA
	// TrustDomain of the SPIFFE IDs; empty means certs.DefaultTrustDomain.
	TrustDomain string
	// Lifetime of a certificate; 0 means certs.DefaultLifetime.
	Lifetime time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Issuer issues certificates and keeps them renewed. See the package doc.
type Issuer struct {
	o   Options
	log *slog.Logger

	mu      sync.Mutex
	entries map[string]*entry // by "gateway <ns>/<name>" or "xds server"
}

// entry is one certificate the issuer keeps renewed.
type entry struct {
	store  certs.Store
	req    certs.Request
	bundle *certs.Bundle
}

// New checks o and returns an Issuer. A nil log discards logs.
func New(o Options, log *slog.Logger) (*Issuer, error) {
	if o.CA == nil {
		return nil, errors.New("issuer: no CA")
	}
	if o.TrustDomain == "" {
		o.TrustDomain = certs.DefaultTrustDomain
	}
	if err := certs.CheckTrustDomain(o.TrustDomain); err != nil {
		return nil, fmt.Errorf("issuer: %w", err)
	}
	if o.Lifetime == 0 {
		o.Lifetime = certs.DefaultLifetime
	}
	if o.Lifetime < certs.MinLifetime {
		return nil, fmt.Errorf("issuer: lifetime %s is shorter than %s", o.Lifetime, certs.MinLifetime)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Issuer{o: o, log: log, entries: map[string]*entry{}}, nil
}

// ServerID is the SPIFFE ID of the xds server, which Envoys check.
func (i *Issuer) ServerID() string {
	return certs.ServiceID{TrustDomain: i.o.TrustDomain, Name: certs.XDSService}.String()
}

// TrustDomain is the issuer's trust domain.
func (i *Issuer) TrustDomain() string { return i.o.TrustDomain }

func gatewayKey(namespace, name string) string { return "gateway " + namespace + "/" + name }

const serverKey = "xds server"

// Gateway makes store hold a good client certificate of the gateway
// namespace/name and remembers store for renewals.
func (i *Issuer) Gateway(ctx context.Context, namespace, name string, store certs.Store) error {
	id := certs.GatewayID{TrustDomain: i.o.TrustDomain, Namespace: namespace, Name: name}
	if err := id.Check(); err != nil {
		return fmt.Errorf("issuer: %w", err)
	}
	return i.ensure(ctx, gatewayKey(namespace, name), store, certs.GatewayRequest(id, i.o.Lifetime))
}

// Server makes store hold a good certificate of the xds server for
// dnsNames (and localhost and the loopback addresses), and remembers store
// for renewals.
func (i *Issuer) Server(ctx context.Context, store certs.Store, dnsNames []string) error {
	return i.ensure(ctx, serverKey, store, certs.XDSServerRequest(i.o.TrustDomain, dnsNames, i.o.Lifetime))
}

// Forget stops renewing the certificate of a gateway that is gone.
func (i *Issuer) Forget(namespace, name string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.entries, gatewayKey(namespace, name))
}

// Renew issues and saves a new certificate for every remembered one that
// is due, and returns the errors of those it could not renew; they are
// tried again at the next call.
func (i *Issuer) Renew(ctx context.Context) error {
	i.mu.Lock()
	keys := make([]string, 0, len(i.entries))
	for k := range i.entries {
		keys = append(keys, k)
	}
	i.mu.Unlock()
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		i.mu.Lock()
		e := i.entries[k]
		i.mu.Unlock()
		if e == nil || certs.RenewReason(i.o.CA, e.bundle, e.req, i.o.Now()) == "" {
			continue
		}
		if err := i.ensure(ctx, k, e.store, e.req); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Run calls Renew every interval until ctx is done, logging failures.
func (i *Issuer) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := i.Renew(ctx); err != nil && ctx.Err() == nil {
			i.log.Error("certificate renewal failed", "error", err)
		}
	}
}

// ensure is Gateway and Server: the remembered bundle, else the stored
// one, else a new one, whichever is good first; then saved to store.
func (i *Issuer) ensure(ctx context.Context, key string, store certs.Store, req certs.Request) error {
	now := i.o.Now()
	i.mu.Lock()
	var bundle *certs.Bundle
	if e := i.entries[key]; e != nil && certs.RenewReason(i.o.CA, e.bundle, req, now) == "" {
		bundle = e.bundle
	}
	i.mu.Unlock()
	reason := ""
	if bundle == nil {
		stored, err := store.Load(ctx)
		switch {
		case err == nil:
			reason = certs.RenewReason(i.o.CA, stored, req, now)
		case errors.Is(err, certs.ErrNotFound):
			reason = "missing"
		default:
			return fmt.Errorf("issuer: %s: read %s: %w", key, store, err)
		}
		if reason == "" {
			bundle = stored
		}
	}
	if bundle == nil {
		var err error
		if bundle, err = i.o.CA.Issue(req, now); err != nil {
			return fmt.Errorf("issuer: %s: %w", key, err)
		}
	}
	if err := store.Save(ctx, bundle); err != nil {
		return fmt.Errorf("issuer: %s: %w", key, err)
	}
	if reason != "" {
		leaf, _ := bundle.Leaf()
		i.log.Info("certificate issued", "for", key, "store", store.String(), "reason", reason,
			"not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	i.mu.Lock()
	i.entries[key] = &entry{store: store, req: req, bundle: bundle}
	i.mu.Unlock()
	return nil
}

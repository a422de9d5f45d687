package certs

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// RenewAt is when a certificate valid from notBefore to notAfter should be
// renewed: once two thirds of its lifetime have passed.
func RenewAt(notBefore, notAfter time.Time) time.Time {
	return notBefore.Add(notAfter.Sub(notBefore) * 2 / 3)
}

// ErrExists: a store that only creates (a CA's Secret) already holds a
// bundle, saved by someone else since it was read.
var ErrExists = errors.New("certs: a bundle is stored already")

// EnsureCA returns the CA in store, creating one named name (lifetime 0:
// DefaultCALifetime) when the store holds none. A stored CA that does not
// parse is an error, never replaced: it may be someone's own CA (see
// ParseCA), and replacing a CA breaks every certificate it issued. When two
// processes create a CA at once in a store whose Save fails with ErrExists
// for the second, both end up with the first one's. created reports
// whether the CA is new.
func EnsureCA(ctx context.Context, store Store, name string, lifetime time.Duration, now time.Time) (ca *CA, created bool, err error) {
	ca, err = loadCA(ctx, store, now)
	if !errors.Is(err, ErrNotFound) {
		return ca, false, err
	}
	ca, err = NewCA(name, lifetime, now)
	if err != nil {
		return nil, false, err
	}
	err = store.Save(ctx, ca.Bundle())
	if errors.Is(err, ErrExists) {
		ca, err = loadCA(ctx, store, now)
		return ca, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("save the CA in %s: %w", store, err)
	}
	return ca, true, nil
}

// loadCA reads and checks the CA of store.
func loadCA(ctx context.Context, store Store, now time.Time) (*CA, error) {
	b, err := store.Load(ctx)
	if errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read the CA in %s: %w", store, err)
	}
	ca, err := ParseCA(b)
	if err != nil {
		return nil, fmt.Errorf("CA in %s: %w", store, err)
	}
	if !now.Before(ca.cert.NotAfter) {
		return nil, fmt.Errorf("CA in %s expired at %s: replace it", store, ca.cert.NotAfter.Format(time.RFC3339))
	}
	return ca, nil
}

// Result is what [Ensure] found and did.
type Result struct {
	// Bundle is the stored bundle, new or not.
	Bundle *Bundle
	// Issued reports whether Ensure issued a new one, and Reason why.
	Issued bool
	Reason string
	// RenewAt is when the bundle should be renewed.
	RenewAt time.Time
}

// Ensure makes store hold a certificate of ca for req that is good at now:
// it keeps the stored one unless it is missing, does not verify against the
// CA (a new CA, a changed bundle), names something else than req, or is past
// its renewal time ([RenewAt]); otherwise it issues and saves a new one.
// Running it again changes nothing.
func Ensure(ctx context.Context, store Store, ca *CA, req Request, now time.Time) (Result, error) {
	if err := req.Check(); err != nil {
		return Result{}, err
	}
	b, err := store.Load(ctx)
	reason := ""
	switch {
	case errors.Is(err, ErrNotFound):
		reason = "missing"
	case err != nil:
		return Result{}, fmt.Errorf("read %s: %w", store, err)
	default:
		reason = RenewReason(ca, b, req, now)
	}
	if reason == "" {
		leaf, _ := b.Leaf()
		return Result{Bundle: b, RenewAt: RenewAt(leaf.NotBefore, leaf.NotAfter)}, nil
	}
	nb, err := ca.Issue(req, now)
	if err != nil {
		return Result{}, err
	}
	if err := store.Save(ctx, nb); err != nil {
		return Result{}, fmt.Errorf("save %s: %w", store, err)
	}
	leaf, _ := nb.Leaf()
	return Result{Bundle: nb, Issued: true, Reason: reason, RenewAt: RenewAt(leaf.NotBefore, leaf.NotAfter)}, nil
}

// RenewReason says why b must be replaced by a new certificate of ca for
// req at now: it does not verify (see CA.Verify), it is past its renewal
// time, or it lives longer than req asks. It is "" when b is good.
func RenewReason(ca *CA, b *Bundle, req Request, now time.Time) string {
	if err := ca.Verify(b, req, now); err != nil {
		return "invalid: " + err.Error()
	}
	leaf, err := b.Leaf()
	if err != nil {
		return "invalid: " + err.Error()
	}
	if !now.Before(RenewAt(leaf.NotBefore, leaf.NotAfter)) {
		return "due for renewal"
	}
	if want := req.lifetime(); leaf.NotAfter.Sub(leaf.NotBefore) > want+backdate {
		return "lifetime shortened"
	}
	return ""
}

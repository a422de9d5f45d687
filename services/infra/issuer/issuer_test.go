package issuer_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
	"github.com/gatewire/gatewire/services/infra/issuer"
)

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// countingStore is a store that counts its saves and may refuse to be read.
type countingStore struct {
	certs.Store
	mu       sync.Mutex
	saves    int
	unread   bool
	failSave bool
}

func (s *countingStore) Load(ctx context.Context) (*certs.Bundle, error) {
	if s.unread {
		return nil, errors.New("forbidden")
	}
	return s.Store.Load(ctx)
}

func (s *countingStore) Save(ctx context.Context, b *certs.Bundle) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failSave {
		return errors.New("disk full")
	}
	s.saves++
	return s.Store.Save(ctx, b)
}

func serial(t *testing.T, s certs.Store) string {
	t.Helper()
	b, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := b.Leaf()
	return leaf.SerialNumber.String()
}

// TestRenewal follows a gateway certificate of 30 hours through time: kept
// until two thirds of its life, then renewed, forgotten with its gateway.
func TestRenewal(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Now()}
	iss, err := issuer.New(issuer.Options{CA: certstest.CA(t, "test CA"), Lifetime: 30 * time.Hour, Now: c.Now}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := certs.FileStore{Files: certs.DirFiles(t.TempDir())}
	store := &countingStore{Store: files}
	if err := iss.Gateway(ctx, "shop", "edge", store); err != nil {
		t.Fatal(err)
	}
	first := serial(t, files)
	c.add(19 * time.Hour)
	if err := iss.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if serial(t, files) != first {
		t.Fatal("renewed before two thirds of the lifetime")
	}
	c.add(2 * time.Hour)
	if err := iss.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	second := serial(t, files)
	if second == first {
		t.Fatal("not renewed past two thirds of the lifetime")
	}
	// Applying the gateway again keeps the renewed certificate.
	if err := iss.Gateway(ctx, "shop", "edge", store); err != nil {
		t.Fatal(err)
	}
	if serial(t, files) != second {
		t.Error("Gateway replaced a good certificate")
	}
	iss.Forget("shop", "edge")
	c.add(25 * time.Hour)
	saves := store.saves
	if err := iss.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if store.saves != saves {
		t.Error("a forgotten gateway's certificate was renewed")
	}
}

// TestStoredCertificateIsKept: after a restart (a new issuer) a good stored
// certificate is kept; a store that cannot be read gets a new one, and a
// failed save is reported and retried.
func TestStoredCertificateIsKept(t *testing.T) {
	ctx := context.Background()
	ca := certstest.CA(t, "test CA")
	files := certs.FileStore{Files: certs.DirFiles(t.TempDir())}
	first, _ := issuer.New(issuer.Options{CA: ca}, nil)
	if err := first.Gateway(ctx, "a", "b", files); err != nil {
		t.Fatal(err)
	}
	before := serial(t, files)
	restarted, _ := issuer.New(issuer.Options{CA: ca}, nil)
	if err := restarted.Gateway(ctx, "a", "b", files); err != nil {
		t.Fatal(err)
	}
	if serial(t, files) != before {
		t.Error("a restarted issuer replaced a good stored certificate")
	}
	if err := restarted.Gateway(ctx, "a", "b", &countingStore{Store: files, unread: true}); err != nil {
		t.Fatal(err)
	}
	failing := &countingStore{Store: certs.FileStore{Files: certs.DirFiles(t.TempDir())}, failSave: true}
	if err := restarted.Server(ctx, failing, []string{"xds.example"}); err == nil {
		t.Error("a failed save was not reported")
	}
	failing.failSave = false
	if err := restarted.Server(ctx, failing, []string{"xds.example"}); err != nil || failing.saves != 1 {
		t.Errorf("retry: %v, %d saves", err, failing.saves)
	}
	if _, err := issuer.New(issuer.Options{}, nil); err == nil {
		t.Error("New without a CA")
	}
	if err := restarted.Gateway(ctx, "Bad", "b", files); err == nil {
		t.Error("a gateway namespace that is not a DNS label was accepted")
	}
}

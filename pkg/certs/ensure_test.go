package certs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
)

func TestEnsureCA(t *testing.T) {
	ctx := context.Background()
	store := certs.FileStore{Files: certs.DirFiles(filepath.Join(t.TempDir(), "ca"))}
	now := time.Now()
	ca, created, err := certs.EnsureCA(ctx, store, "gatewire test CA", 0, now)
	if err != nil || !created {
		t.Fatalf("EnsureCA on an empty store: created %t, %v", created, err)
	}
	fi, err := os.Stat(store.Files.Key)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("CA key file: %v, mode %v, want 0600", err, fi.Mode())
	}
	again, created, err := certs.EnsureCA(ctx, store, "gatewire test CA", 0, now)
	if err != nil || created || !again.Certificate().Equal(ca.Certificate()) {
		t.Fatalf("EnsureCA again: created %t, same %t, %v", created, again.Certificate().Equal(ca.Certificate()), err)
	}
	// A CA that does not parse is someone's problem to solve, not ours to
	// replace: every certificate it issued would stop verifying.
	if err := os.WriteFile(store.Files.Key, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := certs.EnsureCA(ctx, store, "gatewire test CA", 0, now); err == nil {
		t.Fatal("EnsureCA accepted a broken CA")
	}
	if data, _ := os.ReadFile(store.Files.Key); string(data) != "garbage" {
		t.Error("EnsureCA replaced a broken CA")
	}
	if _, _, err := certs.EnsureCA(ctx, certs.FileStore{Files: certs.DirFiles(t.TempDir())}, "x", 0, now.Add(-11*365*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureRenews(t *testing.T) {
	ctx := context.Background()
	ca := certstest.CA(t, "test CA")
	store := certs.FileStore{Files: certs.DirFiles(t.TempDir())}
	req := certs.GatewayRequest(gatewayID("shop", "edge"), 30*time.Hour)
	start := time.Now()

	first, err := certs.Ensure(ctx, store, ca, req, start)
	if err != nil || !first.Issued || first.Reason != "missing" {
		t.Fatalf("first Ensure: %+v, %v", first, err)
	}
	if want := start.Add(20*time.Hour - 5*time.Minute/3); first.RenewAt.Sub(want).Abs() > 2*time.Second {
		t.Errorf("RenewAt %s, want about %s (two thirds of the lifetime)", first.RenewAt, want)
	}
	steps := []struct {
		at     time.Time
		issued bool
	}{
		{start.Add(time.Hour), false},
		{start.Add(19 * time.Hour), false},
		{start.Add(21 * time.Hour), true}, // past two thirds of 30h
		{start.Add(22 * time.Hour), false},
	}
	prev := first.Bundle
	for _, s := range steps {
		r, err := certs.Ensure(ctx, store, ca, req, s.at)
		if err != nil {
			t.Fatal(err)
		}
		if r.Issued != s.issued {
			t.Errorf("at +%s: issued %t (%s), want %t", s.at.Sub(start), r.Issued, r.Reason, s.issued)
		}
		if r.Issued == r.Bundle.Equal(prev) {
			t.Errorf("at +%s: issued %t but the bundle changed %t", s.at.Sub(start), r.Issued, !r.Bundle.Equal(prev))
		}
		prev = r.Bundle
	}

	// Another CA, another name, a shorter lifetime, a broken key: each is
	// reissued.
	other := certstest.CA(t, "other CA")
	now := start.Add(22 * time.Hour)
	sequence := []struct {
		name   string
		ca     *certs.CA
		req    certs.Request
		issued bool
	}{
		{"new CA", other, req, true},
		{"unchanged", other, req, false},
		{"renamed", other, certs.GatewayRequest(gatewayID("shop", "edge2"), 30*time.Hour), true},
		{"shorter lifetime", other, certs.GatewayRequest(gatewayID("shop", "edge2"), 2*time.Hour), true},
		{"server instead of client", other, certs.XDSServerRequest("gatewire.local", nil, 2*time.Hour), true},
		{"unchanged again", other, certs.XDSServerRequest("gatewire.local", nil, 2*time.Hour), false},
	}
	for _, s := range sequence {
		r, err := certs.Ensure(ctx, store, s.ca, s.req, now)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if r.Issued != s.issued {
			t.Errorf("%s: issued %t (%s), want %t", s.name, r.Issued, r.Reason, s.issued)
		}
	}
	if err := os.WriteFile(store.Files.Key, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := certs.Ensure(ctx, store, other, sequence[len(sequence)-1].req, now)
	if err != nil || !r.Issued {
		t.Errorf("broken key: issued %t, %v", r.Issued, err)
	}
}

func TestFileStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := certs.FileStore{Files: certs.DirFiles(filepath.Join(dir, "nested", "folder"))}
	if _, err := store.Load(ctx); !errors.Is(err, certs.ErrNotFound) {
		t.Fatalf("Load of nothing = %v, want ErrNotFound", err)
	}
	ca := certstest.CA(t, "test CA")
	b := certstest.Issue(t, ca, certs.GatewayRequest(gatewayID("a", "b"), 0))
	if err := store.Save(ctx, b); err != nil {
		t.Fatal(err)
	}
	got, err := store.Load(ctx)
	if err != nil || !got.Equal(b) {
		t.Fatalf("Load after Save: equal %t, %v", got.Equal(b), err)
	}
	fi, _ := os.Stat(store.Files.Cert)
	mtime := fi.ModTime()
	time.Sleep(10 * time.Millisecond)
	if err := store.Save(ctx, b); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(store.Files.Cert); !fi.ModTime().Equal(mtime) {
		t.Error("Save of the same bundle rewrote the certificate")
	}
	if err := store.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(store.Files.CA); err != nil {
		t.Errorf("Remove removed the shared CA file: %v", err)
	}
	if _, err := store.Load(ctx); !errors.Is(err, certs.ErrNotFound) {
		t.Errorf("Load after Remove = %v", err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "nested", "folder", ".gatewire-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestRemembered: a store the process may only write is read from memory:
// a new process issues anew, the same one does not.
func TestRemembered(t *testing.T) {
	ctx := context.Background()
	ca := certstest.CA(t, "test CA")
	files := certs.FileStore{Files: certs.DirFiles(t.TempDir())}
	req := certs.GatewayRequest(gatewayID("a", "b"), 0)
	if _, err := certs.Ensure(ctx, files, ca, req, time.Now()); err != nil {
		t.Fatal(err)
	}
	mem := certs.Remembered(files)
	if _, err := mem.Load(ctx); !errors.Is(err, certs.ErrNotFound) {
		t.Fatalf("Load before any Save = %v, want ErrNotFound", err)
	}
	first, err := certs.Ensure(ctx, mem, ca, req, time.Now())
	if err != nil || !first.Issued {
		t.Fatalf("first Ensure: issued %t, %v", first.Issued, err)
	}
	second, err := certs.Ensure(ctx, mem, ca, req, time.Now())
	if err != nil || second.Issued || !second.Bundle.Equal(first.Bundle) {
		t.Fatalf("second Ensure: issued %t, %v", second.Issued, err)
	}
	if stored, _ := files.Load(ctx); !stored.Equal(first.Bundle) {
		t.Error("Remembered did not write through")
	}
}

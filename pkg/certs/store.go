package certs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// ErrNotFound: a store holds no bundle yet.
var ErrNotFound = errors.New("certs: no bundle stored")

// Store keeps one bundle: PEM files ([FileStore]) or a Kubernetes Secret
// (package kubesecret).
type Store interface {
	// Load reads the bundle. It fails with an error wrapping ErrNotFound
	// when the store holds none (a Store whose key file is missing holds
	// none). CA may be empty.
	Load(ctx context.Context) (*Bundle, error)
	// Save replaces the bundle.
	Save(ctx context.Context, b *Bundle) error
	// String says where the store is, for logs and errors.
	String() string
}

// FileStore keeps a bundle in three PEM files. Save writes each file
// atomically (a temporary file in the same folder, then a rename), and only
// when its content changes, the key last with mode 0600; it creates the
// folders. Files that share a CA file (the gateways of one bootstrap folder)
// write the same content to it.
type FileStore struct{ Files Files }

// Load reads the three files. A missing Cert or Key is ErrNotFound; a
// missing CA file is an empty CA.
func (s FileStore) Load(_ context.Context) (*Bundle, error) {
	cert, err := readPEMFile(s.Files.Cert)
	if err != nil {
		return nil, err
	}
	key, err := readPEMFile(s.Files.Key)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Cert: cert, Key: key}
	if s.Files.CA != "" {
		b.CA, err = readPEMFile(s.Files.CA)
		if errors.Is(err, ErrNotFound) {
			err = nil
		}
	}
	return b, err
}

// Save writes the files that changed.
func (s FileStore) Save(_ context.Context, b *Bundle) error {
	if s.Files.CA != "" {
		if err := writeFileIfChanged(s.Files.CA, b.CA, 0o644); err != nil {
			return err
		}
	}
	// The certificate first, then its key: a reader that reads between
	// the two sees a pair that does not match and keeps its old one.
	if err := writeFileIfChanged(s.Files.Cert, b.Cert, 0o644); err != nil {
		return err
	}
	return writeFileIfChanged(s.Files.Key, b.Key, 0o600)
}

// Remove deletes the certificate and key files (not the CA file, which
// others may share); missing files are fine.
func (s FileStore) Remove() error {
	var errs []error
	for _, p := range []string{s.Files.Cert, s.Files.Key} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s FileStore) String() string { return s.Files.Cert }

// readPEMFile reads a file of at most MaxPEMSize bytes.
func readPEMFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrNotFound, path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPEMSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxPEMSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, MaxPEMSize)
	}
	return data, nil
}

// writeFileIfChanged makes the file at path hold data, atomically, with mode.
func writeFileIfChanged(path string, data []byte, mode os.FileMode) error {
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, data) {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() == mode {
			return nil
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, ".gatewire-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Remembered wraps a store that this process may write but not read (a
// Kubernetes Secret in a namespace where it has no right to get Secrets):
// Load returns what this Remembered last saved, ErrNotFound before that,
// and never reads the store. A process that starts again issues anew.
func Remembered(s Store) Store { return &remembered{Store: s} }

type remembered struct {
	Store
	mu   sync.Mutex
	last *Bundle
}

func (r *remembered) Load(context.Context) (*Bundle, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil, fmt.Errorf("%w: %s not written by this process yet", ErrNotFound, r.Store)
	}
	return r.last, nil
}

func (r *remembered) Save(ctx context.Context, b *Bundle) error {
	if err := r.Store.Save(ctx, b); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = b
	return nil
}

package certs

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultCheckInterval is how often a [Reloader] reads its files again.
const DefaultCheckInterval = time.Second

// Reloader holds the certificate, key and CA bundle of a set of files, and
// reads them again when they change. Create it with [NewReloader]. It is
// safe for concurrent use.
type Reloader struct {
	files    Files
	interval time.Duration
	onChange func(leaf *x509.Certificate, err error)
	now      func() time.Time

	mu      sync.Mutex
	checked time.Time
	raw     [3][]byte // the bytes of cert, key and CA last read
	cur     *loaded   // nil until a pair has loaded
}

// loaded is one good read of the files.
type loaded struct {
	cert *tls.Certificate // nil when Files.Cert is empty (a CA-only client)
	leaf *x509.Certificate
	pool *x509.CertPool
}

// ReloadOption configures a Reloader.
type ReloadOption func(*Reloader)

// WithCheckInterval sets how often the files are read again (default
// DefaultCheckInterval); 0 reads them at every handshake.
func WithCheckInterval(d time.Duration) ReloadOption {
	return func(r *Reloader) { r.interval = d }
}

// OnChange calls fn after every read that found new content: with the new
// leaf when it loaded (nil for a CA-only reloader), or with the error that
// kept the previous files in use.
func OnChange(fn func(leaf *x509.Certificate, err error)) ReloadOption {
	return func(r *Reloader) { r.onChange = fn }
}

// NewReloader returns a reloader of files. files.CA is required; Cert and
// Key are both set or both empty (a client that only verifies its server).
// It reads nothing yet: call Load to check the files now.
func NewReloader(files Files, opts ...ReloadOption) (*Reloader, error) {
	if files.CA == "" {
		return nil, errors.New("certs: reloader without a CA bundle file")
	}
	if (files.Cert == "") != (files.Key == "") {
		return nil, fmt.Errorf("certs: certificate file %q and key file %q: give both or neither", files.Cert, files.Key)
	}
	r := &Reloader{files: files, interval: DefaultCheckInterval, now: time.Now}
	for _, opt := range opts {
		opt(r)
	}
	return r, nil
}

// Load reads the files now and reports whether a usable set is loaded: the
// new one, or the previous one when the new one does not load (then the
// error says why, and the previous one stays in use).
func (r *Reloader) Load() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.read()
}

// current returns the newest good set, reading the files when the check
// interval has passed.
func (r *Reloader) current() (*loaded, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.cur == nil || r.now().Sub(r.checked) >= r.interval {
		err = r.read()
	}
	if r.cur == nil {
		return nil, fmt.Errorf("certs: no usable certificate in %s: %w", r.files.describe(), err)
	}
	return r.cur, nil
}

// read reads the files and swaps in what changed and loads. Callers hold mu.
func (r *Reloader) read() error {
	r.checked = r.now()
	var raw [3][]byte
	for i, path := range []string{r.files.Cert, r.files.Key, r.files.CA} {
		if path == "" {
			continue
		}
		data, err := readPEMFile(path)
		if err != nil {
			return err
		}
		raw[i] = data
	}
	if r.cur != nil && bytes.Equal(raw[0], r.raw[0]) && bytes.Equal(raw[1], r.raw[1]) && bytes.Equal(raw[2], r.raw[2]) {
		return nil
	}
	l, err := parseLoaded(raw)
	if err != nil {
		err = fmt.Errorf("certs: %s: %w", r.files.describe(), err)
	} else {
		r.raw, r.cur = raw, l
	}
	if r.onChange != nil {
		r.onChange(l.leafOrNil(), err)
	}
	return err
}

func parseLoaded(raw [3][]byte) (*loaded, error) {
	b := &Bundle{Cert: raw[0], Key: raw[1], CA: raw[2]}
	pool, err := b.Pool()
	if err != nil {
		return nil, err
	}
	l := &loaded{pool: pool}
	if raw[0] == nil {
		return l, nil
	}
	pair, err := b.KeyPair()
	if err != nil {
		return nil, err
	}
	if l.leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
		return nil, err
	}
	pair.Leaf = l.leaf
	l.cert = &pair
	return l, nil
}

func (l *loaded) leafOrNil() *x509.Certificate {
	if l == nil {
		return nil
	}
	return l.leaf
}

func (f Files) describe() string {
	if f.Cert == "" {
		return f.CA
	}
	return fmt.Sprintf("%s, %s and %s", f.Cert, f.Key, f.CA)
}

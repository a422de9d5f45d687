package service

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/gatewire/gatewire/pkg/natsauth"
)

// maxCredentialFile bounds the files the NATS variables name: a creds file
// or seed is a few hundred bytes, a PEM chain a few KiB.
const maxCredentialFile = 1 << 20

// validateNATS checks the NATS credential and TLS variables: each file
// exists and parses, a certificate comes with its key, and at most one kind
// of credentials is given.
func (b Base) validateNATS() []error {
	return b.checkNATS(func(variable string) string { return Prefix + "_" + variable })
}

// CheckNATS is the check of the NATS credential and TLS files that Load
// makes, for configurations that come from elsewhere (the flags of a
// command): name turns a variable without its prefix (NATS_TLS_CA) into
// the name the errors give.
func (b Base) CheckNATS(name func(variable string) string) error {
	return errors.Join(b.checkNATS(name)...)
}

func (b Base) checkNATS(name func(string) string) []error {
	var errs []error
	check := func(variable, path string, parse func([]byte) error) {
		if path == "" {
			return
		}
		data, err := readLimited(path)
		if err == nil {
			err = parse(data)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", name(variable), path, err))
		}
	}
	if b.NATSCreds != "" && b.NATSNkeySeed != "" {
		errs = append(errs, fmt.Errorf("%s and %s: give one of them, not both", name("NATS_CREDS"), name("NATS_NKEY_SEED")))
	}
	check("NATS_CREDS", b.NATSCreds, func(data []byte) error {
		if _, err := nkeys.ParseDecoratedJWT(data); err != nil {
			return fmt.Errorf("no user JWT: %w", err)
		}
		if _, err := nkeys.ParseDecoratedNKey(data); err != nil {
			return fmt.Errorf("no user seed: %w", err)
		}
		return nil
	})
	check("NATS_NKEY_SEED", b.NATSNkeySeed, func(data []byte) error {
		_, err := natsauth.ParseSeed(data)
		return err
	})
	check("NATS_TLS_CA", b.NATSTLSCA, func(data []byte) error {
		if !x509.NewCertPool().AppendCertsFromPEM(data) {
			return errors.New("no PEM certificate in it")
		}
		return nil
	})
	switch {
	case (b.NATSTLSCert == "") != (b.NATSTLSKey == ""):
		errs = append(errs, fmt.Errorf("%s and %s: give both or neither", name("NATS_TLS_CERT"), name("NATS_TLS_KEY")))
	case b.NATSTLSCert != "":
		if _, err := tls.LoadX509KeyPair(b.NATSTLSCert, b.NATSTLSKey); err != nil {
			errs = append(errs, fmt.Errorf("%s %s and %s %s: %w", name("NATS_TLS_CERT"), b.NATSTLSCert, name("NATS_TLS_KEY"), b.NATSTLSKey, err))
		}
	}
	return errs
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCredentialFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxCredentialFile {
		return nil, fmt.Errorf("larger than %d bytes", maxCredentialFile)
	}
	return data, nil
}

// hasCredentials reports whether the configuration names NATS credentials.
func (b Base) hasCredentials() bool { return b.NATSCreds != "" || b.NATSNkeySeed != "" }

// NATSOptions are the connection options of base's credentials and TLS
// files, for a client of role (a natsauth role, or any name for other
// clients): its user (a creds file or an nkey seed), TLS with the CA
// bundle and client certificate (read again at each reconnection, so
// rotated files are picked up), replies under the role's own inbox
// prefix, asynchronous errors (a permission the server refused) logged, and
// a warning, once, when it connects without credentials to a server that
// asks for none.
func NATSOptions(base Base, role string, log *slog.Logger) ([]nats.Option, error) {
	opts := []nats.Option{
		nats.CustomInboxPrefix(natsauth.InboxPrefix(base.System, natsauth.Role(role))),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			log.Error("nats error", "error", err, "subject", subject)
		}),
	}
	switch {
	case base.NATSCreds != "":
		opts = append(opts, nats.UserCredentials(base.NATSCreds))
	case base.NATSNkeySeed != "":
		opt, err := nats.NkeyOptionFromSeed(base.NATSNkeySeed)
		if err != nil {
			return nil, fmt.Errorf("%s_NATS_NKEY_SEED %s: %w", Prefix, base.NATSNkeySeed, err)
		}
		opts = append(opts, opt)
	}
	if base.NATSTLSCA != "" {
		opts = append(opts, nats.RootCAs(base.NATSTLSCA))
	}
	if base.NATSTLSCert != "" {
		opts = append(opts, nats.ClientCert(base.NATSTLSCert, base.NATSTLSKey))
	}
	if base.NATSTLSCA != "" || base.NATSTLSCert != "" {
		opts = append(opts, nats.Secure(&tls.Config{MinVersion: tls.VersionTLS12}))
	}
	if !base.hasCredentials() {
		var once sync.Once
		opts = append(opts, nats.ConnectHandler(func(c *nats.Conn) {
			if c.AuthRequired() {
				return
			}
			once.Do(func() {
				log.Warn("nats server asks for no credentials: any client that reaches it may read and write every bucket; give each service its user (GATEWIRE_NATS_NKEY_SEED or GATEWIRE_NATS_CREDS)",
					"url", c.ConnectedUrlRedacted())
			})
		}))
	}
	return opts, nil
}

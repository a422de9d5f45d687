package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/gatewire/gatewire/pkg/natsauth"
)

// standaloneAuth prepares the users of the embedded NATS server in dir:
// a seed file per role (mode 0600), made on first start and kept after,
// and from them auth.conf, the same accounts block a production nats.conf
// includes (natsauth.AuthConfig), and nats.conf for storeDir. It returns
// the seed file of every role and the path of nats.conf.
func standaloneAuth(dir, storeDir, system string) (map[natsauth.Role]string, string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("GATEWIRE_STANDALONE_AUTH_DIR: %w", err)
	}
	seeds := map[natsauth.Role]string{}
	var users []natsauth.User
	for _, role := range natsauth.Roles {
		u, path, err := loadOrCreateUser(dir, role)
		if err != nil {
			return nil, "", fmt.Errorf("GATEWIRE_STANDALONE_AUTH_DIR: %w", err)
		}
		seeds[role], users = path, append(users, u)
	}
	auth, err := natsauth.AuthConfig(system, users)
	if err != nil {
		return nil, "", err
	}
	store, err := filepath.Abs(storeDir)
	if err != nil {
		return nil, "", fmt.Errorf("GATEWIRE_STANDALONE_STORE_DIR: %w", err)
	}
	conf := "# The embedded NATS server of gatewire standalone, written at every start.\n" +
		fmt.Sprintf("jetstream { store_dir: %q }\ninclude \"auth.conf\"\n", store)
	for name, data := range map[string]string{"auth.conf": auth, "nats.conf": conf} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			return nil, "", fmt.Errorf("GATEWIRE_STANDALONE_AUTH_DIR: %w", err)
		}
	}
	return seeds, filepath.Join(dir, "nats.conf"), nil
}

// loadOrCreateUser reads <dir>/<role>.nk, or writes a new user there.
func loadOrCreateUser(dir string, role natsauth.Role) (natsauth.User, string, error) {
	path := filepath.Join(dir, string(role)+".nk")
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		u, err := natsauth.UserFromSeed(role, data)
		if err != nil {
			return u, path, fmt.Errorf("%s: %w (remove it to make a new one)", path, err)
		}
		return u, path, nil
	case !errors.Is(err, os.ErrNotExist):
		return natsauth.User{}, path, err
	}
	u, err := natsauth.NewUser(role)
	if err != nil {
		return u, path, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return u, path, err
	}
	_, err = f.Write(u.Seed)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return u, path, err
}

// embeddedOptions are the options of the embedded server: its nats.conf
// (the users), listening on listen, which must be a loopback address: the
// embedded server serves no TLS, and nothing but this host should reach it.
func embeddedOptions(confPath, listen string) (*server.Options, error) {
	opts, err := server.ProcessConfigFile(confPath)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server configuration %s: %w", confPath, err)
	}
	opts.JetStream, opts.NoSigs, opts.NoLog, opts.ServerName = true, true, true, "gatewire-standalone"
	opts.DontListen = listen == ""
	if listen == "" {
		return opts, nil
	}
	host, port, err := splitPort(listen)
	if err != nil {
		return nil, usageError("GATEWIRE_STANDALONE_NATS_LISTEN: %v", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, usageError("GATEWIRE_STANDALONE_NATS_LISTEN: %q is not a loopback address: the embedded NATS server serves no TLS and listens on this host only (127.0.0.1 or ::1); run a NATS cluster with TLS to share the bus", listen)
	}
	opts.Host, opts.Port = host, port
	return opts, nil
}

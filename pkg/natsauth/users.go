package natsauth

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nkeys"
)

// Account is the NATS account that holds every gatewire user.
const Account = "GATEWIRE"

// User is one NATS user of a role, authenticated by an nkey.
type User struct {
	Role Role
	// Public is the user's public nkey (U...), what the server knows.
	Public string
	// Seed is the user's secret, the content of its seed file; nil for a
	// user known by its public key only.
	Seed []byte
}

// NewUser makes a user of role with a new nkey.
func NewUser(role Role) (User, error) {
	if _, err := ParseRole(string(role)); err != nil {
		return User{}, err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return User{}, fmt.Errorf("natsauth: nkey of %s: %w", role, err)
	}
	return userOf(role, kp)
}

// UserFromSeed reads the user of role from its seed file's content.
func UserFromSeed(role Role, seed []byte) (User, error) {
	kp, err := ParseSeed(seed)
	if err != nil {
		return User{}, fmt.Errorf("natsauth: %s seed: %w", role, err)
	}
	return userOf(role, kp)
}

func userOf(role Role, kp nkeys.KeyPair) (User, error) {
	pub, err := kp.PublicKey()
	if err != nil {
		return User{}, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return User{}, err
	}
	return User{Role: role, Public: pub, Seed: append(seed, '\n')}, nil
}

// MaxSeedSize bounds a seed file: a seed is 58 characters.
const MaxSeedSize = 4096

// ParseSeed reads a user nkey seed: the first line of data that starts
// with SU (the format of a seed file, blank lines and comments around it
// allowed).
func ParseSeed(data []byte) (nkeys.KeyPair, error) {
	if len(data) > MaxSeedSize {
		return nil, fmt.Errorf("seed file of %d bytes, more than %d", len(data), MaxSeedSize)
	}
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if !bytes.HasPrefix(line, []byte("SU")) {
			continue
		}
		kp, err := nkeys.FromSeed(line)
		if err != nil {
			return nil, fmt.Errorf("not a user nkey seed: %w", err)
		}
		return kp, nil
	}
	return nil, fmt.Errorf("no user nkey seed (a line starting with SU)")
}

// NewUsers makes a user of every role.
func NewUsers() ([]User, error) {
	var out []User
	for _, r := range Roles {
		u, err := NewUser(r)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// AuthConfig renders the accounts block of nats.conf that lets users in,
// each with the permissions of its role in the installation system: one
// account (Account) with JetStream enabled. Include it from the server's
// configuration (include "auth.conf"). The output holds public keys only;
// it is the same for the same input.
func AuthConfig(system string, users []User) (string, error) {
	if len(users) == 0 {
		return "", fmt.Errorf("natsauth: no users")
	}
	var b strings.Builder
	b.WriteString("# NATS users of gatewire installation " + strconv.Quote(system) + ", one per role,\n")
	b.WriteString("# each allowed the subjects of its role only (see gatewire's package natsauth).\n")
	b.WriteString("# Written by gatewire; it holds public keys only.\n")
	b.WriteString("accounts {\n  " + Account + " {\n    jetstream: enabled\n    users: [\n")
	for _, u := range users {
		if !nkeys.IsValidPublicUserKey(u.Public) {
			return "", fmt.Errorf("natsauth: %s: %q is not a public user nkey", u.Role, u.Public)
		}
		p, err := For(u.Role, system)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "      # %s\n      {\n        nkey: %s\n        permissions: {\n", u.Role, u.Public)
		writeSubjects(&b, "publish", p.Publish)
		writeSubjects(&b, "subscribe", p.Subscribe)
		b.WriteString("        }\n      }\n")
	}
	b.WriteString("    ]\n  }\n}\n")
	return b.String(), nil
}

func writeSubjects(b *strings.Builder, name string, s Subjects) {
	fmt.Fprintf(b, "          %s: {\n", name)
	for _, part := range []struct {
		name     string
		subjects []string
	}{{"allow", s.Allow}, {"deny", s.Deny}} {
		if len(part.subjects) == 0 {
			continue
		}
		fmt.Fprintf(b, "            %s: [\n", part.name)
		for _, subject := range slices.Sorted(slices.Values(part.subjects)) {
			// Quoted: an unquoted $ starts a variable in nats.conf.
			fmt.Fprintf(b, "              %q\n", subject)
		}
		b.WriteString("            ]\n")
	}
	b.WriteString("          }\n")
}

// EnsureUsers returns a user of every role: from the seed read returns for
// it, or, when read returns nil and no error (no seed yet), a new one,
// listed in created. It is how a generator keeps the users it made before.
func EnsureUsers(read func(Role) ([]byte, error)) (users []User, created []Role, err error) {
	for _, role := range Roles {
		seed, err := read(role)
		if err != nil {
			return nil, nil, fmt.Errorf("natsauth: seed of %s: %w", role, err)
		}
		var u User
		if seed == nil {
			u, err = NewUser(role)
			created = append(created, role)
		} else {
			u, err = UserFromSeed(role, seed)
		}
		if err != nil {
			return nil, nil, err
		}
		users = append(users, u)
	}
	return users, created, nil
}

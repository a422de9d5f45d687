package natsauth_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
	"github.com/gatewire/gatewire/pkg/natsauth"
	"github.com/gatewire/gatewire/pkg/natsauth/natsauthtest"
	"github.com/gatewire/gatewire/pkg/service"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// baseEdit is a connection's configuration, changed by a case.
type baseEdit = service.Base

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// attack is one thing a role must not be able to do.
type attack struct {
	name string
	role natsauth.Role
	// subject is the subject the server must refuse.
	subject string
	do      func(ctx context.Context, b *bus.Bus) error
}

func put(bucket bus.Bucket, key string) func(context.Context, *bus.Bus) error {
	return func(ctx context.Context, b *bus.Bus) error {
		_, err := b.Put(ctx, bucket, key, &busv1.Status{})
		return err
	}
}

// request sends a raw request, as a client that does not use package bus
// would.
func request(subject, body string) func(context.Context, *bus.Bus) error {
	return func(ctx context.Context, b *bus.Bus) error {
		_, err := b.Conn().RequestWithContext(ctx, subject, []byte(body))
		return err
	}
}

// TestAttacks tries, as each role, what its permissions must refuse, on a
// server with gatewire's authorization, and checks that the server refused
// it: the operation fails and the server answers a permissions violation
// for the subject.
func TestAttacks(t *testing.T) {
	s := natsauthtest.Start(t, natsauthtest.Options{TLS: true, VerifyClients: true})
	buses, answers := openBuses(t, s)
	ctx := context.Background()
	route := bus.StatusKey("HTTPRoute", "shop", "web", "shop", "edge")
	if _, err := buses[natsauth.Translator].Put(ctx, bus.Status, route, &busv1.Status{}); err != nil {
		t.Fatal(err)
	}
	attacks := []attack{
		{"the provider writes the xds bucket", natsauth.Provider, "$KV.gatewire-xds.shop.edge", put(bus.XDS, "shop.edge")},
		{"the provider writes status", natsauth.Provider, "$KV.gatewire-status." + route, put(bus.Status, route)},
		{"the provider changes a bucket it does not own", natsauth.Provider, "$JS.API.STREAM.",
			func(ctx context.Context, b *bus.Bus) error { _, err := bus.New(ctx, b.Conn()); return err }},
		{"the reader writes resources", natsauth.Reader, "$KV.gatewire-resources.HTTPRoute.shop.web", put(bus.Resources, "HTTPRoute.shop.web")},
		{"the reader writes the xds bucket", natsauth.Reader, "$KV.gatewire-xds.shop.edge", put(bus.XDS, "shop.edge")},
		{"the reader writes status", natsauth.Reader, "$KV.gatewire-status." + route, put(bus.Status, route)},
		{"the reader deletes a key", natsauth.Reader, "$KV.gatewire-status." + route,
			func(ctx context.Context, b *bus.Bus) error { return b.Delete(ctx, bus.Status, route) }},
		{"the reader purges a bucket", natsauth.Reader, "$JS.API.STREAM.PURGE.KV_gatewire-resources", request("$JS.API.STREAM.PURGE.KV_gatewire-resources", "")},
		{"the reader deletes a bucket", natsauth.Reader, "$JS.API.STREAM.DELETE.KV_gatewire-xds", request("$JS.API.STREAM.DELETE.KV_gatewire-xds", "")},
		{"the reader writes the object store", natsauth.Reader, "$O.gatewire-objects.M.evil", request("$O.gatewire-objects.M.evil", "{}")},
		{"xds writes resources", natsauth.XDS, "$KV.gatewire-resources.Secret.shop.tls", put(bus.Resources, "Secret.shop.tls")},
		{"xds writes a route's status", natsauth.XDS, "$KV.gatewire-status." + route, put(bus.Status, route)},
		{"xds writes infra's status entry", natsauth.XDS, "$KV.gatewire-status.Gateway.shop.edge.=infra.=infra", put(bus.Status, "Gateway.shop.edge.=infra.=infra")},
		{"xds reads every status entry", natsauth.XDS, "$JS.API.CONSUMER.CREATE.KV_gatewire-status.",
			func(ctx context.Context, b *bus.Bus) error { _, err := b.Watch(ctx, bus.Status, ">"); return err }},
		{"xds reads a route's status entry", natsauth.XDS, "$JS.API.DIRECT.GET.KV_gatewire-status.$KV.gatewire-status." + route,
			func(ctx context.Context, b *bus.Bus) error { _, err := b.Get(ctx, bus.Status, route); return err }},
		{"xds reads resources (Secrets)", natsauth.XDS, "$JS.API.CONSUMER.CREATE.KV_gatewire-resources.",
			func(ctx context.Context, b *bus.Bus) error { _, err := b.Watch(ctx, bus.Resources, ">"); return err }},
		{"infra writes the xds bucket", natsauth.Infra, "$KV.gatewire-xds.shop.edge", put(bus.XDS, "shop.edge")},
		{"infra writes xds's status entry", natsauth.Infra, "$KV.gatewire-status.Gateway.shop.edge.=xds.xds-0", put(bus.Status, "Gateway.shop.edge.=xds.xds-0")},
		{"the translator writes xds's status entry", natsauth.Translator, "$KV.gatewire-status.Gateway.shop.edge.=xds.xds-0", put(bus.Status, "Gateway.shop.edge.=xds.xds-0")},
		{"the translator writes resources", natsauth.Translator, "$KV.gatewire-resources.Secret.shop.tls", put(bus.Resources, "Secret.shop.tls")},
		{"the translator deletes a bucket", natsauth.Translator, "$JS.API.STREAM.DELETE.KV_gatewire-resources", request("$JS.API.STREAM.DELETE.KV_gatewire-resources", "")},
		{"the provider reads another role's replies", natsauth.Provider, "_INBOX.>",
			func(ctx context.Context, b *bus.Bus) error {
				return subscribe(ctx, b.Conn(), "_INBOX.>", answers[natsauth.Provider])
			}},
		{"the provider reads the translator's inbox", natsauth.Provider, natsauth.InboxPrefix("gatewire", natsauth.Translator) + ".>",
			func(ctx context.Context, b *bus.Bus) error {
				return subscribe(ctx, b.Conn(), natsauth.InboxPrefix("gatewire", natsauth.Translator)+".>", answers[natsauth.Provider])
			}},
		{"the reader follows writes to the xds bucket as they are published", natsauth.Reader, "$KV.gatewire-xds.>",
			func(ctx context.Context, b *bus.Bus) error {
				return subscribe(ctx, b.Conn(), "$KV.gatewire-xds.>", answers[natsauth.Reader])
			}},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if err := a.do(ctx, buses[a.role]); err == nil {
				t.Fatalf("%s succeeded", a.name)
			}
			answer := waitAnswer(answers[a.role], a.subject)
			if answer == "" {
				t.Fatalf("the server did not answer a permissions violation for %s", a.subject)
			}
			t.Logf("%s: refused: %s", a.name, answer)
		})
	}
}

// subscribe subscribes to subject and waits for the server's verdict: the
// subscription closed, or a permissions violation for subject in the
// connection's errors. (The connection's LastError alone is not enough:
// other attacks on the same connection, run in parallel, replace it.)
func subscribe(ctx context.Context, nc *nats.Conn, subject string, errs *natsauthtest.Errors) error {
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	if err := nc.FlushWithContext(ctx); err != nil {
		return err
	}
	for ctx.Err() == nil {
		if !sub.IsValid() {
			return errors.New("subscription closed by the server")
		}
		if err := nc.LastError(); err != nil && strings.Contains(err.Error(), subject) {
			return err
		}
		if msg := errs.Find("Permissions Violation", subject); msg != "" {
			return errors.New(msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// waitAnswer waits a little for the server's permissions violation for
// subject (or a subject it starts) among e, and returns its text.
func waitAnswer(e *natsauthtest.Errors, subject string) string {
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		// The log line quotes the subject: to \"<subject>...
		if msg := e.Find("Permissions Violation", `to \"`+subject); msg != "" {
			i := strings.Index(msg, "Permissions Violation")
			return strings.TrimRight(msg[i:], "\\\"\n subject=")
		}
	}
	return ""
}

// TestPushConsumerCannotWriteAnotherBucket: a role that may create a
// consumer could make it deliver into another bucket's subjects; the server
// must not store what it delivers there.
func TestPushConsumerCannotWriteAnotherBucket(t *testing.T) {
	s := natsauthtest.Start(t, natsauthtest.Options{})
	buses, _ := openBuses(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := buses[natsauth.Translator].Put(ctx, bus.Status, bus.StatusKey("HTTPRoute", "shop", "web", "shop", "edge"), &busv1.Status{}); err != nil {
		t.Fatal(err)
	}
	reader := buses[natsauth.Reader].Conn()
	filter := "$KV.gatewire-status.>"
	body := fmt.Sprintf(`{"stream_name":"KV_gatewire-status","config":{"name":"evil","deliver_subject":"$KV.gatewire-xds.shop.injected","filter_subject":%q,"deliver_policy":"all","ack_policy":"none"}}`, filter)
	reply, err := reader.RequestWithContext(ctx, "$JS.API.CONSUMER.CREATE.KV_gatewire-status.evil."+filter, []byte(body))
	if err == nil {
		t.Logf("the server answered the consumer: %s", reply.Data)
	}
	time.Sleep(time.Second)
	if _, err := buses[natsauth.Reader].Get(ctx, bus.XDS, "shop.injected"); !errors.Is(err, bus.ErrNotFound) {
		t.Fatalf("a consumer of the reader wrote into the xds bucket: Get = %v", err)
	}
}

// TestConnectionsRefused: clients without a user, with a user the server
// does not know, without TLS, or with a certificate of another CA, cannot
// connect at all.
func TestConnectionsRefused(t *testing.T) {
	s := natsauthtest.Start(t, natsauthtest.Options{TLS: true, VerifyClients: true})
	good := s.Base(t, natsauth.Reader)
	if _, _, err := natsauthtest.Connect(t, good, natsauth.Reader); err != nil {
		t.Fatalf("control: %v", err)
	}
	stranger, err := natsauth.NewUser(natsauth.Reader)
	if err != nil {
		t.Fatal(err)
	}
	strangerSeed := filepath.Join(t.TempDir(), "stranger.nk")
	writeFile(t, strangerSeed, stranger.Seed)
	foreignCA := certstest.CA(t, "another CA")
	foreign := certstest.Write(t, filepath.Join(t.TempDir(), "foreign"), certstest.Issue(t, foreignCA,
		certs.ServiceRequest(certs.ServiceID{TrustDomain: certstest.TrustDomain, Name: "reader"}, certs.ClientAuth, nil, 0)))
	for name, edit := range map[string]func(*baseEdit){
		"no user":                         func(b *baseEdit) { b.NATSNkeySeed = "" },
		"a user the server does not know": func(b *baseEdit) { b.NATSNkeySeed = strangerSeed },
		"no client certificate":           func(b *baseEdit) { b.NATSTLSCert, b.NATSTLSKey = "", "" },
	} {
		b := good
		edit(&b)
		if _, _, err := natsauthtest.Connect(t, b, natsauth.Reader); err == nil {
			t.Errorf("%s: connected", name)
		} else {
			t.Logf("%s: refused: %v", name, err)
		}
	}

	// A certificate of another CA, sent whatever CAs the server asks for
	// (crypto/tls would not send it on its own).
	pair, err := tls.LoadX509KeyPair(foreign.Cert, foreign.Key)
	if err != nil {
		t.Fatal(err)
	}
	roots, _ := (&certs.Bundle{CA: s.CA.TrustBundle()}).Pool()
	insist := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }}
	seed, _ := nats.NkeyOptionFromSeed(good.NATSNkeySeed)
	if nc, err := nats.Connect(good.NATSURL, nats.Secure(insist), seed, nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Error("a client certificate from another CA: connected")
	} else {
		t.Logf("a client certificate from another CA: refused: %v", err)
	}

	// Plaintext: the server's INFO asks for TLS; a client that sends
	// CONNECT without it is refused.
	raw, err := net.DialTimeout("tcp", s.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_ = raw.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(raw)
	info, _ := r.ReadString('\n')
	if !strings.Contains(info, `"tls_required":true`) {
		t.Errorf("INFO does not require TLS: %s", info)
	}
	_, _ = fmt.Fprintf(raw, "CONNECT {\"verbose\":false,\"pedantic\":false}\r\nPING\r\n")
	answer, err := r.ReadString('\n')
	if strings.HasPrefix(answer, "PONG") || strings.HasPrefix(answer, "+OK") {
		t.Errorf("plaintext CONNECT: the server answered %q", answer)
	}
	t.Logf("plaintext CONNECT: refused: answer %q, then %v", strings.TrimSpace(answer), err)
}

package certs_test

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gatewire/gatewire/pkg/certs"
	"github.com/gatewire/gatewire/pkg/certs/certstest"
)

// echoServer serves TLS on loopback with cfg and echoes every line; it
// records the errors of failed handshakes.
type echoServer struct {
	addr string
	mu   sync.Mutex
	errs []error
}

func startEcho(t *testing.T, cfg *tls.Config) *echoServer {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				if err := c.(*tls.Conn).Handshake(); err != nil {
					s.mu.Lock()
					s.errs = append(s.errs, err)
					s.mu.Unlock()
					return
				}
				_, _ = io.Copy(c, c)
			})
		}
	})
	return s
}

// conn is a client connection to an echoServer.
type conn struct {
	*tls.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string, cfg *tls.Config) (*conn, error) {
	t.Helper()
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	// In TLS 1.3 the server checks the client certificate after the
	// client's handshake returns: a refusal shows on the first read.
	cc := &conn{Conn: c, r: bufio.NewReader(c)}
	if err := cc.echo("hello"); err != nil {
		return nil, err
	}
	return cc, nil
}

func (c *conn) echo(line string) error {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return err
	}
	got, err := c.r.ReadString('\n')
	if err != nil {
		return err
	}
	if got != line+"\n" {
		return errors.New("echo returned " + got)
	}
	return nil
}

func serial(c *conn) string { return c.ConnectionState().PeerCertificates[0].SerialNumber.String() }

// TestRotationKeepsConnections replaces the server's certificate while a
// client is connected: the client keeps being served over its connection,
// and the next handshake gets the new certificate.
func TestRotationKeepsConnections(t *testing.T) {
	ca := certstest.CA(t, "test CA")
	serverDir := t.TempDir()
	req := certs.XDSServerRequest(certstest.TrustDomain, nil, 0)
	files := certstest.Write(t, serverDir, certstest.Issue(t, ca, req))
	cfg, err := certs.ServerConfig(files, certs.WithCheckInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	s := startEcho(t, cfg)
	client, err := certs.ClientConfig(certstest.Gateway(t, ca, "shop", "edge"), "127.0.0.1", certs.WithCheckInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	before, err := dial(t, s.addr, client)
	if err != nil {
		t.Fatalf("first client: %v", err)
	}
	oldSerial := serial(before)

	rotated := certstest.Issue(t, ca, req)
	certstest.Write(t, serverDir, rotated)
	newLeaf, _ := rotated.Leaf()

	if err := before.echo("still there"); err != nil {
		t.Fatalf("the connection from before the rotation: %v", err)
	}
	after, err := dial(t, s.addr, client)
	if err != nil {
		t.Fatalf("client after the rotation: %v", err)
	}
	if serial(after) != newLeaf.SerialNumber.String() || serial(after) == oldSerial {
		t.Errorf("new handshake got certificate %s, want the rotated %s (old %s)", serial(after), newLeaf.SerialNumber, oldSerial)
	}
	if err := before.echo("and still"); err != nil {
		t.Fatalf("the connection from before the rotation, after a new handshake: %v", err)
	}
}

// TestHalfWrittenRotation writes a new certificate without its key: the
// server keeps its old pair until the key follows.
func TestHalfWrittenRotation(t *testing.T) {
	ca := certstest.CA(t, "test CA")
	dir := t.TempDir()
	req := certs.XDSServerRequest(certstest.TrustDomain, nil, 0)
	files := certstest.Write(t, dir, certstest.Issue(t, ca, req))
	var changes []error
	var mu sync.Mutex
	cfg, err := certs.ServerConfig(files, certs.WithCheckInterval(0), certs.OnChange(func(_ *x509Cert, err error) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, err)
	}))
	if err != nil {
		t.Fatal(err)
	}
	s := startEcho(t, cfg)
	client, err := certs.ClientConfig(certstest.Gateway(t, ca, "a", "b"), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	c, err := dial(t, s.addr, client)
	if err != nil {
		t.Fatal(err)
	}
	old := serial(c)
	next := certstest.Issue(t, ca, req)
	writeFile(t, files.Cert, next.Cert)
	c, err = dial(t, s.addr, client)
	if err != nil {
		t.Fatalf("during a half-written rotation: %v", err)
	}
	if serial(c) != old {
		t.Error("the server took a certificate without its key")
	}
	writeFile(t, files.Key, next.Key)
	c, err = dial(t, s.addr, client)
	if err != nil {
		t.Fatal(err)
	}
	if serial(c) == old {
		t.Error("the server kept its old certificate once the new key was written")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changes) < 2 || changes[len(changes)-2] == nil || changes[len(changes)-1] != nil {
		t.Errorf("OnChange saw %v, want a refusal of the half-written pair and then a load", changes)
	}
}

// TestServerRefuses attacks the server's TLS: every client below must be
// refused.
func TestServerRefuses(t *testing.T) {
	ca := certstest.CA(t, "test CA")
	cfg, err := certs.ServerConfig(certstest.XDSServer(t, ca))
	if err != nil {
		t.Fatal(err)
	}
	s := startEcho(t, cfg)
	good, err := certs.ClientConfig(certstest.Gateway(t, ca, "a", "b"), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dial(t, s.addr, good); err != nil {
		t.Fatalf("a good client was refused: %v", err)
	}
	foreign := certstest.CA(t, "another CA")
	foreignClient, _ := certs.ClientConfig(withCA(t, certstest.Gateway(t, foreign, "a", "b"), ca), "localhost")
	serverAsClient, _ := certs.ClientConfig(certstest.XDSServer(t, ca), "localhost")
	noCert := good.Clone()
	noCert.GetClientCertificate = nil
	tls12 := good.Clone()
	tls12.MinVersion, tls12.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	attacks := map[string]*tls.Config{
		"a certificate from another CA":              foreignClient,
		"the server's own certificate as a client's": serverAsClient,
		"no client certificate":                      noCert,
		"TLS 1.2":                                    tls12,
	}
	for name, cfg := range attacks {
		if _, err := dial(t, s.addr, cfg); err == nil {
			t.Errorf("%s: the server accepted the client", name)
		} else {
			t.Logf("%s: refused: %v", name, err)
		}
	}
	// Plaintext: the server answers no protocol at all.
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if n > 0 && buf[0] != 0x15 { // anything but a TLS alert record
		t.Errorf("plaintext client: the server answered %q", buf[:n])
	}
	t.Logf("plaintext client: %d bytes (%x), %v", n, buf[:n], err)
}

// TestClientRefusesImpostor: a client checks that its server holds a
// server certificate of its CA for the address it dialled.
func TestClientRefusesImpostor(t *testing.T) {
	ca := certstest.CA(t, "test CA")
	gateway := certstest.Gateway(t, ca, "a", "b")
	// A server that shows a gateway's client certificate.
	impostor, err := certs.ServerConfig(certstest.Gateway(t, ca, "x", "y"))
	if err != nil {
		t.Fatal(err)
	}
	s := startEcho(t, impostor)
	client, _ := certs.ClientConfig(gateway, "localhost")
	if _, err := dial(t, s.addr, client); err == nil {
		t.Error("a client accepted a gateway certificate as its server's")
	}
	real, _ := certs.ServerConfig(certstest.XDSServer(t, ca))
	s = startEcho(t, real)
	wrongName, _ := certs.ClientConfig(gateway, "gatewire-xds.elsewhere.svc")
	if _, err := dial(t, s.addr, wrongName); err == nil {
		t.Error("a client accepted a server certificate for another name")
	}
	if _, err := dial(t, s.addr, client); err != nil {
		t.Errorf("control: %v", err)
	}
}

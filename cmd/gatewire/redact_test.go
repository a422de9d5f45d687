package main

import (
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

func inline(s string) *corev3.DataSource {
	return &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: []byte(s)}}
}

// TestRedact checks that every sensitive field is redacted, in a Secret
// and inside the typed config of a listener's transport socket, and that
// what is not sensitive is kept.
func TestRedact(t *testing.T) {
	tlsCtx, err := anypb.New(&tlsv3.DownstreamTlsContext{CommonTlsContext: &tlsv3.CommonTlsContext{
		TlsCertificates: []*tlsv3.TlsCertificate{{
			CertificateChain: inline("CERTIFICATE-CHAIN"),
			PrivateKey:       inline("SECRET-KEY-1"),
			Password:         inline("SECRET-PASSWORD"),
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	l := &listenerv3.Listener{Name: "https", FilterChains: []*listenerv3.FilterChain{{
		TransportSocket: &corev3.TransportSocket{Name: "tls", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: tlsCtx}},
	}}}
	tickets := &tlsv3.Secret{Name: "tickets", Type: &tlsv3.Secret_SessionTicketKeys{SessionTicketKeys: &tlsv3.TlsSessionTicketKeys{
		Keys: []*corev3.DataSource{inline("SECRET-TICKET-1"), inline("SECRET-TICKET-2")},
	}}}
	generic := &tlsv3.Secret{Name: "generic", Type: &tlsv3.Secret_GenericSecret{GenericSecret: &tlsv3.GenericSecret{Secret: inline("SECRET-GENERIC")}}}
	for name, msg := range map[string]proto.Message{"listener": l, "tickets": tickets, "generic": generic} {
		if err := redact(msg.ProtoReflect()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := protojson.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), "SECRET") {
			t.Errorf("%s keeps a secret after redact: %s", name, out)
		}
		if !strings.Contains(string(out), redacted) {
			t.Errorf("%s has no %s: %s", name, redacted, out)
		}
	}
	if out, _ := protojson.Marshal(l); !strings.Contains(string(out), "Q0VSVElGSUNBVEUtQ0hBSU4=") {
		t.Errorf("the certificate chain, which is not sensitive, was removed: %s", out)
	}
}

// TestRedactUnknownAny checks that an Any of a type nobody registered is
// an error rather than printed unread.
func TestRedactUnknownAny(t *testing.T) {
	l := &listenerv3.Listener{Name: "x", FilterChains: []*listenerv3.FilterChain{{
		TransportSocket: &corev3.TransportSocket{Name: "tls", ConfigType: &corev3.TransportSocket_TypedConfig{
			TypedConfig: &anypb.Any{TypeUrl: "type.googleapis.com/example.Unknown", Value: []byte{1, 2}}}},
	}}}
	if err := redact(l.ProtoReflect()); err == nil || !strings.Contains(err.Error(), "example.Unknown") {
		t.Fatalf("redact of an unknown Any: %v, want an error naming its type", err)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"io"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/gatewire/gatewire/pkg/manifest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// render returns the documents to print for output.
func render(output string, objects []manifest.Object, t translated) ([]any, error) {
	switch output {
	case "ir":
		docs := make([]any, 0, len(t.gateways))
		for _, out := range t.gateways {
			ir := proto.CloneOf(out.IR)
			for _, s := range ir.GetSecrets() {
				s.PrivateKey = nil
			}
			docs = append(docs, ir)
		}
		return docs, nil
	case "xds":
		docs := make([]any, 0, len(t.gateways))
		for _, out := range t.gateways {
			doc, err := xdsDoc(out.Gateway.String(), out.XDS, out.XDSError)
			if err != nil {
				return nil, err
			}
			docs = append(docs, doc)
		}
		return docs, nil
	}
	return statusDocs(objects, t)
}

// xdsDoc is the xds output of one gateway: its snapshot, with private keys
// redacted, or the error that kept the IR from making valid xDS.
func xdsDoc(gateway string, snap *busv1.XdsSnapshot, xdsErr error) (any, error) {
	if xdsErr != nil {
		return map[string]string{"node_cluster": gateway, "error": xdsErr.Error()}, nil
	}
	snap = proto.CloneOf(snap)
	for _, typed := range snap.GetResources() {
		for i, a := range typed.GetResources() {
			r, err := redactSecret(a)
			if err != nil {
				return nil, fmt.Errorf("gateway %s: %w", gateway, err)
			}
			typed.Resources[i] = r
		}
	}
	return snap, nil
}

// redactSecret returns a with the private key of an SDS Secret replaced by
// "[redacted]"; a itself when it is not a Secret.
func redactSecret(a *anypb.Any) (*anypb.Any, error) {
	var s tlsv3.Secret
	if !a.MessageIs(&s) {
		return a, nil
	}
	if err := a.UnmarshalTo(&s); err != nil {
		return nil, err
	}
	if c := s.GetTlsCertificate(); c != nil && c.GetPrivateKey() != nil {
		c.PrivateKey = &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: redacted}}
	}
	return anypb.New(&s)
}

// marshalDoc returns doc as JSON; proto messages with their proto field
// names, as the golden files of the translator show them.
func marshalDoc(doc any) ([]byte, error) {
	if m, ok := doc.(proto.Message); ok {
		return protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	}
	return json.Marshal(doc)
}

// write prints docs: YAML documents separated by "---", or one JSON value (a
// v1 List of the objects for the status output, an array of the gateways'
// documents otherwise). Documents are encoded in parallel, a batch at a
// time, and printed in order.
func write(w io.Writer, format, output string, docs []any) error {
	if format == "json" {
		raw := make([]json.RawMessage, len(docs))
		if err := encodeAll(len(docs), func(i int) (err error) {
			raw[i], err = marshalDoc(docs[i])
			return err
		}); err != nil {
			return err
		}
		var v any = raw
		if output == "status" {
			v = map[string]any{"apiVersion": "v1", "kind": "List", "items": raw}
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	const batch = 256
	out := make([][]byte, batch)
	for start := 0; start < len(docs); start += batch {
		part := docs[start:min(start+batch, len(docs))]
		if err := encodeAll(len(part), func(i int) error {
			b, err := marshalDoc(part[i])
			if err == nil {
				out[i], err = jsonToYAML(b)
			}
			return err
		}); err != nil {
			return err
		}
		for i := range part {
			if start+i > 0 {
				if _, err := io.WriteString(w, "---\n"); err != nil {
					return err
				}
			}
			if _, err := w.Write(out[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// encodeAll calls encode(i) for every i below n, in parallel, and returns
// the error of the first i that failed.
func encodeAll(n int, encode func(i int) error) error {
	errs := make([]error, n)
	manifest.Parallel(n, func(i int) { errs[i] = encode(i) })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

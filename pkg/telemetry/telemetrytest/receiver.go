// Package telemetrytest runs OTLP trace receivers in the test process, one
// over HTTP (OTLP/HTTP, protobuf) and one over gRPC, that keep the spans
// they receive, so that a test can check what a process exported.
package telemetrytest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// maxRequestBytes bounds the body of one OTLP/HTTP request.
const maxRequestBytes = 16 << 20

// Span is one span as a receiver got it.
type Span struct {
	// Service is the service.name of the exporting process's resource.
	Service string
	// Scope is the name of the tracer that recorded the span.
	Scope        string
	Name         string
	TraceID      string
	SpanID       string
	ParentSpanID string
	Attributes   map[string]string
	// Start and End are when the span began and ended, by the clock of
	// the exporting process.
	Start, End time.Time
}

// Receiver keeps the spans exported to it. It is safe for concurrent use.
type Receiver struct {
	endpoint string
	mu       sync.Mutex
	spans    []Span
	changed  chan struct{}
}

func newReceiver(endpoint string) *Receiver {
	return &Receiver{endpoint: endpoint, changed: make(chan struct{})}
}

// Endpoint is the URL to set OTEL_EXPORTER_OTLP_ENDPOINT to
// ("http://127.0.0.1:<port>").
func (r *Receiver) Endpoint() string { return r.endpoint }

// Spans returns a copy of the spans received so far, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Wait waits until done holds for the spans received, and fails the test
// with what was received when it does not within timeout.
func (r *Receiver) Wait(t testing.TB, timeout time.Duration, what string, done func([]Span) bool) []Span {
	t.Helper()
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		spans, changed := slices.Clone(r.spans), r.changed
		r.mu.Unlock()
		if done(spans) {
			return spans
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("telemetrytest: %s: not within %s; received %d spans:\n%s", what, timeout, len(spans), Format(spans))
		}
	}
}

// Format lists spans one a line, for failure messages.
func Format(spans []Span) string {
	var b bytes.Buffer
	for _, s := range spans {
		fmt.Fprintf(&b, "  %s %s %q trace %s span %s parent %s\n", s.Service, s.Scope, s.Name, s.TraceID, s.SpanID, s.ParentSpanID)
	}
	return b.String()
}

func (r *Receiver) add(req *collectortrace.ExportTraceServiceRequest) {
	var got []Span
	for _, rs := range req.GetResourceSpans() {
		service := attributes(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				got = append(got, Span{
					Service: service, Scope: ss.GetScope().GetName(), Name: s.GetName(),
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()),
					Attributes:   attributes(s.GetAttributes()),
					Start:        time.Unix(0, int64(s.GetStartTimeUnixNano())),
					End:          time.Unix(0, int64(s.GetEndTimeUnixNano())),
				})
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spans = append(r.spans, got...)
	close(r.changed)
	r.changed = make(chan struct{})
}

func attributes(kvs []*commonv1.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			out[kv.GetKey()] = v.GetStringValue()
		default:
			out[kv.GetKey()] = fmt.Sprint(v.GetValue())
		}
	}
	return out
}

// NewHTTP starts an OTLP/HTTP receiver on a loopback port (POST
// /v1/traces, protobuf, plain or gzip) that stops when the test ends.
func NewHTTP(t testing.TB) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("telemetrytest: listen: %v", err)
	}
	r := newReceiver("http://" + ln.Addr().String())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		msg, err := readRequest(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(msg)
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return r
}

func readRequest(req *http.Request) (*collectortrace.ExportTraceServiceRequest, error) {
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		return nil, fmt.Errorf("content type %q: want application/x-protobuf", ct)
	}
	var body io.Reader = http.MaxBytesReader(nil, req.Body, maxRequestBytes)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, err
		}
		body = io.LimitReader(zr, maxRequestBytes)
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	msg := &collectortrace.ExportTraceServiceRequest{}
	if err := proto.Unmarshal(data, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// NewGRPC starts an OTLP/gRPC receiver on a loopback port, without TLS,
// that stops when the test ends.
func NewGRPC(t testing.TB) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("telemetrytest: listen: %v", err)
	}
	r := newReceiver("http://" + ln.Addr().String())
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(maxRequestBytes))
	collectortrace.RegisterTraceServiceServer(srv, grpcService{r: r})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r
}

type grpcService struct {
	collectortrace.UnimplementedTraceServiceServer
	r *Receiver
}

func (s grpcService) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	s.r.add(req)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

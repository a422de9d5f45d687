package integration

import (
	"context"
	"fmt"
	"sync"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	sotw "github.com/envoyproxy/go-control-plane/pkg/client/sotw/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// roamingEnvoy acts as one Envoy of a gateway with two xds replicas to
// choose from: one ADS stream per resource type over one connection to a
// replica, ACKing what passes ValidateAll and NACKing the rest. When the
// replica goes away it keeps its configuration, as Envoy does, and
// reconnects to the other replica; its first requests there name the
// versions it holds.
type roamingEnvoy struct {
	cluster string
	addrs   []string
	clients map[string]sotw.ADSClient // by type URL; they outlive connections

	mu    sync.Mutex
	state map[string]map[string]proto.Message // type URL → name → resource
	nacks []error
	// moves counts the connections made after the first.
	moves int
	done  chan struct{}
}

// roam starts an envoy of cluster that connects first to addrs[first]. It
// runs until ctx is done.
func roam(ctx context.Context, cluster string, addrs []string, first int) *roamingEnvoy {
	node := &core.Node{Id: "chaos-" + cluster, Cluster: cluster}
	e := &roamingEnvoy{cluster: cluster, addrs: addrs, clients: map[string]sotw.ADSClient{},
		state: map[string]map[string]proto.Message{}, done: make(chan struct{})}
	for _, typeURL := range envoyTypes {
		e.clients[typeURL] = sotw.NewADSClient(ctx, node, typeURL)
	}
	go e.run(ctx, first)
	return e
}

// run connects to one replica after the other until ctx is done.
func (e *roamingEnvoy) run(ctx context.Context, next int) {
	defer close(e.done)
	for ctx.Err() == nil {
		e.connect(ctx, e.addrs[next%len(e.addrs)])
		next++
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
		e.mu.Lock()
		e.moves++
		e.mu.Unlock()
	}
}

// connect follows one replica until one of the streams fails.
func (e *roamingEnvoy) connect(ctx context.Context, addr string) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed := make(chan struct{}, len(e.clients))
	var wg sync.WaitGroup
	for typeURL, c := range e.clients {
		wg.Go(func() {
			if err := c.InitConnect(conn); err == nil {
				e.follow(c, typeURL)
			}
			failed <- struct{}{}
		})
	}
	select {
	case <-failed:
	case <-ctx.Done():
	}
	_ = conn.Close() // ends the other streams
	cancel()
	wg.Wait()
}

// follow applies the responses of one stream until it fails.
func (e *roamingEnvoy) follow(c sotw.ADSClient, typeURL string) {
	for {
		resp, err := c.Fetch()
		if err != nil {
			return
		}
		got, bad := decodeResponse(resp)
		if bad != nil {
			bad = fmt.Errorf("%s %s: %w", e.cluster, typeURL, bad)
		}
		e.mu.Lock()
		if bad == nil {
			e.state[typeURL] = got
		} else {
			e.nacks = append(e.nacks, bad)
		}
		e.mu.Unlock()
		if bad != nil {
			err = c.Nack(bad.Error())
		} else {
			err = c.Ack()
		}
		if err != nil {
			return
		}
	}
}

// diff says how what the envoy holds differs from want; "" when it does
// not.
func (e *roamingEnvoy) diff(want map[string]map[string]proto.Message) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, typeURL := range envoyTypes {
		got, exp := e.state[typeURL], want[typeURL]
		if len(got) != len(exp) {
			return fmt.Sprintf("%s: %d %s, want %d", e.cluster, len(got), shortType(typeURL), len(exp))
		}
		for name, m := range exp {
			if !proto.Equal(got[name], m) {
				g, _ := protojson.Marshal(got[name])
				w, _ := protojson.Marshal(m)
				return fmt.Sprintf("%s: %s %s differs\nGOT  %s\nWANT %s", e.cluster, shortType(typeURL), name, g, w)
			}
		}
	}
	return ""
}

func (e *roamingEnvoy) stats() (moves int, nacks []error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.moves, append([]error(nil), e.nacks...)
}

func shortType(typeURL string) string {
	for i := len(typeURL) - 1; i >= 0; i-- {
		if typeURL[i] == '.' {
			return typeURL[i+1:]
		}
	}
	return typeURL
}

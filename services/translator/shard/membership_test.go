package shard_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/pkg/bus/bustest"
	"github.com/gatewire/gatewire/services/translator/shard"
)

var testConfig = shard.Config{Heartbeat: 100 * time.Millisecond, TTL: 500 * time.Millisecond}

// run runs the membership of id over b until the returned function is
// called or the test ends.
func run(t *testing.T, b *bus.Bus, id string) (*shard.Membership, func()) {
	t.Helper()
	cfg := testConfig
	cfg.ID = id
	m, err := shard.New(b, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = m.Run(ctx)
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return m, stop
}

// waitView waits until m's view holds exactly members.
func waitView(t *testing.T, m *shard.Membership, members ...string) {
	t.Helper()
	slices.Sort(members)
	want := fmt.Sprint(members)
	deadline := time.After(20 * time.Second)
	for {
		v, ready := m.View()
		if ready && fmt.Sprint(v.Members()) == want {
			return
		}
		select {
		case <-m.Changed():
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s sees %v (ready %v), want %s", m.Self(), v.Members(), ready, want)
		}
	}
}

func TestMembersJoinAndLeave(t *testing.T) {
	b := bustest.New(t)
	a, _ := run(t, b, "a")
	waitView(t, a, "a")
	c, stopC := run(t, b, "c")
	waitView(t, a, "a", "c")
	waitView(t, c, "a", "c")
	stopC() // a clean stop deletes the key
	waitView(t, a, "a")
}

// A replica that dies without a word is dropped when its TTL runs out.
func TestDeadMemberExpires(t *testing.T) {
	srv := bustest.Server(t)
	b := bustest.Open(t, bustest.Connect(t, srv))
	a, _ := run(t, b, "a")
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	dying, err := bus.New(context.Background(), nc, bus.WithSystem(b.System()))
	if err != nil {
		t.Fatal(err)
	}
	_, stopDying := run(t, dying, "dying")
	waitView(t, a, "a", "dying")
	nc.Close() // no more heartbeats, and no deletion on the way out
	stopDying()
	waitView(t, a, "a")
}

// While NATS is away a replica drops no one: it cannot tell dead members
// from its own isolation. Afterwards the members find each other again.
func TestOutageDropsNoOne(t *testing.T) {
	srv := bustest.StartRestartable(t)
	connect := func() *nats.Conn {
		nc, err := nats.Connect(srv.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	b1 := bustest.Open(t, connect())
	b2, err := bus.New(context.Background(), connect(), bus.WithSystem(b1.System()))
	if err != nil {
		t.Fatal(err)
	}
	m1, _ := run(t, b1, "one")
	m2, _ := run(t, b2, "two")
	waitView(t, m1, "one", "two")
	waitView(t, m2, "one", "two")

	srv.Stop()
	time.Sleep(3 * testConfig.TTL)
	if v, _ := m1.View(); len(v.Members()) != 2 {
		t.Fatalf("during the outage one sees %v, want both members", v.Members())
	}
	srv.Start()
	waitView(t, m1, "one", "two")
	waitView(t, m2, "one", "two")
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []shard.Config{
		{Heartbeat: time.Second, TTL: 3 * time.Second},
		{ID: "a", TTL: time.Second},
		{ID: "a", Heartbeat: time.Second, TTL: time.Second},
	} {
		if c.Validate() == nil {
			t.Errorf("Validate(%+v) accepted it", c)
		}
	}
}

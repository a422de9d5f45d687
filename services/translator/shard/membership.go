package shard

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/gatewire/gatewire/pkg/bus"
)

// memberPattern matches every translator's key in the members bucket.
const memberPattern = "translator.*"

// Config is how a replica takes part in the membership.
type Config struct {
	// ID names the replica; it must be unique among live replicas.
	ID string
	// Heartbeat is how often the replica writes its heartbeat.
	Heartbeat time.Duration
	// TTL is how long a member stays live without a heartbeat. It should be
	// a few heartbeats, so that one late write drops no one.
	TTL time.Duration
}

// Validate reports a bad value.
func (c Config) Validate() error {
	switch {
	case c.ID == "":
		return errors.New("shard: empty replica id")
	case c.Heartbeat <= 0:
		return fmt.Errorf("shard: heartbeat %s: want a positive duration", c.Heartbeat)
	case c.TTL < 2*c.Heartbeat:
		return fmt.Errorf("shard: ttl %s: want at least two heartbeats (%s)", c.TTL, 2*c.Heartbeat)
	}
	return nil
}

// Membership keeps a replica's heartbeat in the members bucket and its view
// of the live members. Run it with [Membership.Run]; View and Changed are
// safe for concurrent use.
type Membership struct {
	bus     *bus.Bus
	cfg     Config
	log     *slog.Logger
	self    string
	started time.Time

	mu      sync.Mutex
	view    View
	ready   bool
	changed chan struct{}
}

// New returns the membership of replica cfg.ID over b. log may be nil.
func New(b *bus.Bus, cfg Config, log *slog.Logger) (*Membership, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	self := memberName(bus.MemberKey(cfg.ID))
	return &Membership{
		bus:     b,
		cfg:     cfg,
		log:     log,
		self:    self,
		started: time.Now(),
		view:    NewView(self),
		changed: make(chan struct{}, 1),
	}, nil
}

// Self is the replica's member name: its id as it appears in member keys.
func (m *Membership) Self() string { return m.self }

// View returns the current view, and false until the members bucket has
// been read once (until then the view holds only the replica itself).
func (m *Membership) View() (View, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.view, m.ready
}

// Changed receives a value after the view changes, or becomes ready. Values
// do not queue up: one receive stands for any number of changes; call View
// to read the latest.
func (m *Membership) Changed() <-chan struct{} { return m.changed }

func (m *Membership) publish(v View, ready bool) {
	m.mu.Lock()
	same := m.ready == ready && m.view.Equal(v)
	m.view, m.ready = v, ready
	m.mu.Unlock()
	if same {
		return
	}
	m.log.Info("translator members", "members", strings.Join(v.Members(), ","))
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

// memberName is the member part of a members-bucket key.
func memberName(key string) string { return strings.TrimPrefix(key, "translator.") }

package translator

import (
	"fmt"
	"time"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
)

// Config is the configuration of the translator service, loaded from the
// environment with the prefix GATEWIRE_ (see pkg/service).
type Config struct {
	// Config is the controller name (GATEWIRE_CONTROLLER_NAME), shared with
	// the provider: the translator translates the Gateways of the
	// GatewayClasses that name it, and puts it in the route and policy
	// statuses it gives.
	gatewayclass.Config
	// Debounce is how long the service gathers changes, from the first one,
	// before it translates the gateways they affect. With 0 it translates
	// as soon as no change is waiting in its watch: a lone edit at once,
	// a burst in as few translations as it takes to read it.
	Debounce time.Duration `envconfig:"TRANSLATOR_DEBOUNCE" default:"0s" desc:"time to gather resource changes before translating the gateways they affect (0: as soon as none is waiting)"`
	// WriteTimeout bounds one write to the bus; a write that times out
	// makes the service resync.
	WriteTimeout time.Duration `envconfig:"TRANSLATOR_WRITE_TIMEOUT" default:"10s" desc:"time allowed for one write to the bus"`
	// ReplicaID names this replica in the members bucket; empty means the
	// host name followed by a random suffix, unique to this process.
	ReplicaID string `envconfig:"TRANSLATOR_REPLICA_ID" default:"" desc:"name of this replica among the translators (default: host name and a random suffix)"`
	// Heartbeat is how often the replica writes its heartbeat.
	Heartbeat time.Duration `envconfig:"TRANSLATOR_HEARTBEAT" default:"1s" desc:"interval of this replica's heartbeat in the members bucket"`
	// MemberTTL is how long a replica counts as live after its last
	// heartbeat: the bound on how long a dead replica's gateways wait
	// before another replica takes them over. The members bucket drops a
	// heartbeat after its own TTL (5s, see bus.WithMemberTTL) in any case,
	// so longer values act as that.
	MemberTTL time.Duration `envconfig:"TRANSLATOR_MEMBER_TTL" default:"3s" desc:"time after its last heartbeat when a replica's gateways are taken over"`
}

// DefaultConfig is the configuration with every default applied.
func DefaultConfig() Config {
	return Config{
		Debounce:     0,
		WriteTimeout: 10 * time.Second,
		Heartbeat:    time.Second,
		MemberTTL:    3 * time.Second,
	}
}

// Limits of the values.
const (
	maxDebounce  = 10 * time.Second // keeps changes from waiting unreasonably long
	maxMemberTTL = time.Minute      // keeps a dead replica's gateways from waiting as long
	maxReplicaID = 200              // leaves room in the NATS subject of the key
)

// Validate reports the first bad value, naming its environment variable.
func (c Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return err
	}
	switch {
	case c.Debounce < 0 || c.Debounce > maxDebounce:
		return fmt.Errorf("GATEWIRE_TRANSLATOR_DEBOUNCE: %s is not between 0s and %s", c.Debounce, maxDebounce)
	case c.WriteTimeout <= 0:
		return fmt.Errorf("GATEWIRE_TRANSLATOR_WRITE_TIMEOUT: %s is not a positive duration", c.WriteTimeout)
	case !validReplicaID(c.ReplicaID):
		return fmt.Errorf("GATEWIRE_TRANSLATOR_REPLICA_ID: %q: want at most %d letters, digits, '-', '_' or '.'", c.ReplicaID, maxReplicaID)
	case c.Heartbeat <= 0:
		return fmt.Errorf("GATEWIRE_TRANSLATOR_HEARTBEAT: %s is not a positive duration", c.Heartbeat)
	case c.MemberTTL < 2*c.Heartbeat || c.MemberTTL > maxMemberTTL:
		return fmt.Errorf("GATEWIRE_TRANSLATOR_MEMBER_TTL: %s is not between two heartbeats (%s) and %s", c.MemberTTL, 2*c.Heartbeat, maxMemberTTL)
	}
	return nil
}

// validReplicaID accepts what can be one token of a NATS subject once
// [bus.MemberKey] has escaped its dots.
func validReplicaID(id string) bool {
	if len(id) > maxReplicaID {
		return false
	}
	for _, r := range id {
		ok := r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

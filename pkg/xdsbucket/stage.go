package xdsbucket

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gatewire/gatewire/pkg/bus"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Validate checks a resource read from the bucket before a Stage holds
// it, for example by decoding its value into its Envoy type.
type Validate func(r *busv1.XdsResource) error

// Stage follows the entries of the xds bucket and assembles each
// gateway's snapshot when a commit and its resources are all there. It is
// not safe for concurrent use.
type Stage struct {
	validate Validate
	gateways map[string]*staged
	inParts  bool
}

// StageOption changes what a Stage assembles.
type StageOption func(*Stage)

// InParts makes the stage's snapshots give each route configuration as its
// parts (TypedResources.resource_parts: the shell's bytes around pages of
// its virtual hosts' fields, see [page]), each page reused while its hosts
// do not change, rather than joined into one new value: for a reader that
// only sends them on, such as the xds service.
func InParts() StageOption { return func(s *Stage) { s.inParts = true } }

type staged struct {
	set *Set
	// commit is the latest commit, until it is assembled.
	commit *busv1.XdsSnapshot
	// bad are the keys whose values were refused, by suffix.
	bad map[string]error
}

// NewStage returns an empty Stage; validate may be nil.
func NewStage(validate Validate, opts ...StageOption) *Stage {
	s := &Stage{validate: validate, gateways: map[string]*staged{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Result is what one entry did to a gateway.
type Result struct {
	// Gateway is the key of the gateway's commit.
	Gateway string
	// Snapshot is set when the entry completed a commit: the snapshot
	// with its resources inline.
	Snapshot *busv1.XdsSnapshot
	// Deleted is set when the gateway's commit was deleted.
	Deleted bool
	// Err says why an entry was refused, or why a commit that just came
	// cannot be assembled (yet): the resources it names are not all there
	// (ErrIncomplete). A reader that starts while a writer writes, or
	// whose watch restarts, reads the latest value of each key in the
	// order they were written, so it may read a commit before the newest
	// value of a key the commit names: ErrIncomplete is expected then, and
	// a sign of trouble only when no later entry completes the gateway.
	Err error
}

// Apply takes one entry of the bucket, in bucket order.
func (s *Stage) Apply(e *bus.Entry) Result {
	gw, suffix, err := ParseKey(e.Key)
	if err != nil {
		return Result{Err: err}
	}
	g := s.gateways[gw]
	if g == nil {
		g = &staged{set: NewSet(), bad: map[string]error{}}
		g.set.inParts = s.inParts
		s.gateways[gw] = g
	}
	res := Result{Gateway: gw}
	if suffix == "" {
		return s.applyCommit(g, e, res)
	}
	delete(g.bad, suffix)
	switch {
	case e.Op == bus.OpDelete:
		g.set.Delete(suffix)
	case e.Err != nil:
		res.Err = g.refuse(suffix, e.Err)
	default:
		if err := s.put(g, suffix, e.Value); err != nil {
			res.Err = g.refuse(suffix, err)
		}
	}
	if g.commit != nil && g.set.Holds(g.commit) {
		return g.assemble(res)
	}
	return res
}

func (s *Stage) applyCommit(g *staged, e *bus.Entry, res Result) Result {
	switch {
	case e.Op == bus.OpDelete:
		g.commit = nil
		res.Deleted = true
		return res
	case e.Err != nil:
		return Result{Gateway: res.Gateway, Err: fmt.Errorf("commit %s: %w", e.Key, e.Err)}
	}
	c, ok := e.Value.(*busv1.XdsSnapshot)
	if !ok {
		return Result{Gateway: res.Gateway, Err: fmt.Errorf("commit %s: value is a %T, want an XdsSnapshot", e.Key, e.Value)}
	}
	if c.GetVersion() == "" {
		return Result{Gateway: res.Gateway, Err: fmt.Errorf("commit %s: version is empty", e.Key)}
	}
	if inline(c) {
		// An older writer's whole snapshot: assembled from keys it never
		// wrote, it would serve the gateway empty.
		return Result{Gateway: res.Gateway, Err: fmt.Errorf("%w: commit %s holds resources inline; resources belong under their own keys", ErrKey, e.Key)}
	}
	g.commit = c
	if !g.set.Holds(c) {
		res.Err = g.mismatch(c)
		return res
	}
	return g.assemble(res)
}

// inline reports whether a commit holds resources, which only an
// in-memory snapshot does.
func inline(c *busv1.XdsSnapshot) bool {
	if len(c.GetProxylessListeners()) > 0 {
		return true
	}
	for _, t := range c.GetResources() {
		if len(t.GetResources()) > 0 {
			return true
		}
	}
	return false
}

func (s *Stage) put(g *staged, suffix string, v any) error {
	r, ok := v.(*busv1.XdsResource)
	if !ok {
		return fmt.Errorf("value is a %T, want an XdsResource", v)
	}
	k, err := KindOf(r)
	if err != nil {
		return err
	}
	if got := Suffix(k, r); got != suffix {
		return fmt.Errorf("resource %q belongs under %s", r.GetName(), got)
	}
	if r.GetVersion() != Version(r.GetValue()) {
		return fmt.Errorf("resource %q: version %q is not the hash of its value", r.GetName(), r.GetVersion())
	}
	if s.validate != nil {
		if err := s.validate(r); err != nil {
			return fmt.Errorf("%s %q: %w", shortType(r.GetTypeUrl()), r.GetName(), err)
		}
	}
	_, _, err = g.set.Put(r)
	return err
}

// refuse drops what the key held (its value is not the writer's any more)
// and remembers why.
func (g *staged) refuse(suffix string, err error) error {
	g.set.Delete(suffix)
	g.bad[suffix] = err
	return fmt.Errorf("%s: %w", suffix, err)
}

func (g *staged) assemble(res Result) Result {
	snap, err := g.set.Assemble(g.commit)
	if err != nil {
		res.Err = err
		return res
	}
	g.commit = nil
	res.Snapshot = snap
	return res
}

// mismatch says why the set does not hold commit.
func (g *staged) mismatch(c *busv1.XdsSnapshot) error {
	var parts []string
	for _, typed := range c.GetResources() {
		t := tallyOrEmpty(g.set.tallies[typed.GetTypeUrl()])
		if !t.matches(typed) {
			parts = append(parts, fmt.Sprintf("%s: %d resources, the commit names %d", shortType(typed.GetTypeUrl()), t.Count, typed.GetCount()))
		}
	}
	bad := make([]string, 0, len(g.bad))
	for suffix, err := range g.bad {
		bad = append(bad, suffix+": "+err.Error())
	}
	slices.Sort(bad)
	if len(bad) > 3 {
		bad = append(bad[:3], fmt.Sprintf("and %d more", len(bad)-3))
	}
	parts = append(parts, bad...)
	if len(parts) == 0 {
		parts = append(parts, "resources of other types are there")
	}
	return fmt.Errorf("%w: commit %s: %s", ErrIncomplete, c.GetVersion(), strings.Join(parts, "; "))
}

// Forget drops what the stage holds of a gateway.
func (s *Stage) Forget(gatewayKey string) { delete(s.gateways, gatewayKey) }

// Gateways lists the gateways the stage holds something of, sorted.
func (s *Stage) Gateways() []string {
	out := make([]string, 0, len(s.gateways))
	for k := range s.gateways {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func shortType(typeURL string) string {
	if i := strings.LastIndexByte(typeURL, '.'); i >= 0 {
		return typeURL[i+1:]
	}
	return typeURL
}

// ErrNoCommit is returned by [Read] for a gateway without a commit.
var ErrNoCommit = errors.New("xdsbucket: the gateway has no commit")

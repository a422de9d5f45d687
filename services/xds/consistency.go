package xds

import (
	"fmt"

	"github.com/gatewire/gatewire/pkg/xdsbucket"
)

// gatewayRefs is what the resources of one gateway name, kept so that a
// commit's consistency check costs what the commit changed, not the size
// of the gateway: it counts, for every route configuration, cluster and
// ClusterLoadAssignment, the resources that are it and those that name it,
// and keeps the names some resource needs and none is.
type gatewayRefs struct {
	bySuffix map[string]*refs
	have     map[refName]int
	need     map[refName]int
	missing  map[refName]bool
}

// refName is a resource of a kind another resource may name.
type refName struct {
	kind xdsbucket.Kind
	name string
}

func newGatewayRefs() *gatewayRefs {
	return &gatewayRefs{bySuffix: map[string]*refs{}, have: map[refName]int{},
		need: map[refName]int{}, missing: map[refName]bool{}}
}

// set records r (nil: nothing) as what the resource under suffix names.
func (g *gatewayRefs) set(suffix string, r *refs) {
	if old := g.bySuffix[suffix]; old != nil {
		g.count(old, -1)
		delete(g.bySuffix, suffix)
	}
	if r != nil {
		g.bySuffix[suffix] = r
		g.count(r, 1)
	}
}

// count adds d to the counts of what r is and names.
func (g *gatewayRefs) count(r *refs, d int) {
	switch r.kind {
	case xdsbucket.KindRoute, xdsbucket.KindCluster, xdsbucket.KindEndpoint:
		g.add(g.have, refName{r.kind, r.name}, d)
	}
	for _, name := range r.routes {
		g.add(g.need, refName{xdsbucket.KindRoute, name}, d)
	}
	if r.endpoints != "" {
		g.add(g.need, refName{xdsbucket.KindEndpoint, r.endpoints}, d)
	}
	for _, name := range r.clusters {
		g.add(g.need, refName{xdsbucket.KindCluster, name}, d)
	}
}

func (g *gatewayRefs) add(counts map[refName]int, n refName, d int) {
	if counts[n] += d; counts[n] == 0 {
		delete(counts, n)
	}
	if g.need[n] > 0 && g.have[n] == 0 {
		g.missing[n] = true
	} else {
		delete(g.missing, n)
	}
}

// consistent checks what the gateway's resources name: every route
// configuration a listener takes over RDS exists, every EDS cluster has
// its endpoints, and every cluster a route sends to exists. The error
// names the first resource that is not.
func (c *checker) consistent(gateway string) error {
	g := c.refs[gateway]
	if g == nil || len(g.missing) == 0 {
		return nil
	}
	for _, r := range g.bySuffix {
		for _, name := range r.routes {
			if g.have[refName{xdsbucket.KindRoute, name}] == 0 {
				return fmt.Errorf("inconsistent: %s %q takes route configuration %q, which the snapshot does not hold", listenerKind(r.kind), r.name, name)
			}
		}
		if r.endpoints != "" && g.have[refName{xdsbucket.KindEndpoint, r.endpoints}] == 0 {
			return fmt.Errorf("inconsistent: EDS cluster %q has no ClusterLoadAssignment %q", r.name, r.endpoints)
		}
		for _, name := range r.clusters {
			if g.have[refName{xdsbucket.KindCluster, name}] == 0 {
				return fmt.Errorf("inconsistent: virtual host %q sends to cluster %q, which the snapshot does not hold", r.name, name)
			}
		}
	}
	return nil
}

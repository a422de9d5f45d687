package shard

import (
	"hash/fnv"
	"slices"
)

// View is the set of live members as one replica sees it. It is immutable;
// the zero View has no members and owns nothing.
type View struct {
	self    string
	members []string // sorted, holds self
}

// NewView returns the view of replica self with the other live members.
// Self is always a member.
func NewView(self string, members ...string) View {
	all := append([]string{self}, members...)
	slices.Sort(all)
	return View{self: self, members: slices.Compact(all)}
}

// Self is the member the view belongs to.
func (v View) Self() string { return v.self }

// Members returns the live members, sorted. The slice is a copy.
func (v View) Members() []string { return slices.Clone(v.members) }

// Equal reports whether two views have the same members.
func (v View) Equal(o View) bool { return slices.Equal(v.members, o.members) }

// Owner returns the member that owns key, "" for an empty view.
func (v View) Owner(key string) string { return Owner(v.members, key) }

// Owns reports whether the view's own member owns key.
func (v View) Owns(key string) bool { return v.self != "" && v.Owner(key) == v.self }

// Owner returns the member of members with the highest weight for key
// (rendezvous, or highest random weight, hashing), "" when there is none.
// Ties, which need equal 64-bit hashes, go to the smaller name.
func Owner(members []string, key string) string {
	best, bestWeight := "", uint64(0)
	for _, m := range members {
		w := weight(m, key)
		if best == "" || w > bestWeight || (w == bestWeight && m < best) {
			best, bestWeight = m, w
		}
	}
	return best
}

// weight is the pseudo-random weight of member for key: FNV-1a over both,
// spread by the SplitMix64 finalizer so that similar names weigh apart.
func weight(member, key string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(key))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

package xdsbucket

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// A route configuration assembled in parts is the head of its shell (up to
// its name), its virtual hosts in pages, and the rest of its shell. A page
// is the encoded virtual_hosts fields of a run of consecutive virtual
// hosts, copied into one buffer, and is reused while the run holds the same
// resources. So a route configuration of thousands of virtual hosts is a
// hundred parts, not two per host: gRPC handles each part of a response on
// its own, per stream and per response. And an edit of one virtual host
// copies one page, not the megabytes of the whole route configuration.
//
// Where a page ends depends on the names of its hosts only, so adding or
// removing a host rebuilds its page and at most the next one, not every
// page after it.
const (
	// defaultPageSpan is the average number of hosts of a page: a page
	// ends after a host whose name hashes to 0 modulo the span.
	defaultPageSpan = 32
	// maxPage ends a page of that many bytes whatever the names.
	maxPage = 256 << 10
	// ownPart is the size from which a virtual host is a part of its own
	// (its field's tag and length, then its value, not copied).
	ownPart = 16 << 10
)

// page is the encoded virtual_hosts fields of hosts.
type page struct {
	hosts []*busv1.XdsResource
	bytes []byte
}

// pagedRoute is the route configuration of shell and vhosts (in order) in
// parts, reusing the pages of its last assembly, prev, and its pages. Any
// cut of the hosts into pages gives the same bytes; the rule of where
// pages end only makes the next assembly find them again.
func pagedRoute(shell []byte, vhosts []*busv1.XdsResource, prev []page, span uint32) ([][]byte, []page) {
	byFirst := make(map[*busv1.XdsResource]int, len(prev))
	for i, p := range prev {
		byFirst[p.hosts[0]] = i
	}
	at := nameEnd(shell)
	parts := [][]byte{shell[:at:at]}
	var pages []page
	add := func(p page) {
		pages = append(pages, p)
		parts = append(parts, p.bytes)
	}
	start, size := 0, 0
	for i := 0; i < len(vhosts); {
		if i == start {
			// A page of the last assembly that starts here and still holds
			// the same hosts is reused whole.
			if k, ok := byFirst[vhosts[i]]; ok && hasPrefix(vhosts[i:], prev[k].hosts) {
				add(prev[k])
				i += len(prev[k].hosts)
				start = i
				continue
			}
		}
		v := vhosts[i].GetValue()
		if len(v) >= ownPart {
			if i > start {
				add(newPage(vhosts[start:i]))
			}
			head := protowire.AppendTag(nil, virtualHostsField, protowire.BytesType)
			parts = append(parts, protowire.AppendVarint(head, uint64(len(v))), v)
			i++
			start, size = i, 0
			continue
		}
		size += protowire.SizeTag(virtualHostsField) + protowire.SizeBytes(len(v))
		i++
		if size >= maxPage || endsPage(vhosts[i-1].GetName(), span) || i == len(vhosts) {
			add(newPage(vhosts[start:i]))
			start, size = i, 0
		}
	}
	return append(parts, shell[at:]), pages
}

// hasPrefix reports whether hosts starts with the same resources as
// prefix.
func hasPrefix(hosts, prefix []*busv1.XdsResource) bool {
	return len(hosts) >= len(prefix) && slices.Equal(hosts[:len(prefix)], prefix)
}

// newPage encodes run into one buffer.
func newPage(run []*busv1.XdsResource) page {
	n := 0
	for _, vh := range run {
		n += protowire.SizeTag(virtualHostsField) + protowire.SizeBytes(len(vh.GetValue()))
	}
	b := make([]byte, 0, n)
	for _, vh := range run {
		b = protowire.AppendTag(b, virtualHostsField, protowire.BytesType)
		b = protowire.AppendBytes(b, vh.GetValue())
	}
	return page{hosts: slices.Clone(run), bytes: b}
}

// endsPage reports whether a page ends after the host of that name: its
// FNV-1a hash is 0 modulo span.
func endsPage(name string, span uint32) bool {
	h := uint32(2166136261)
	for i := range len(name) {
		h = (h ^ uint32(name[i])) * 16777619
	}
	return h%span == 0
}

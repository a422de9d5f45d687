package xds

import (
	"strconv"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
)

// encoded is a response already in its wire form: the shared bytes of a
// type's body, or of its resources, and a few bytes of its own (the
// nonce). The server's codec sends the buffers as they are, so the shared
// bytes are never copied or encoded again per stream.
type encoded struct {
	bufs mem.BufferSlice
}

// codec is gRPC's proto codec, except that it sends an [encoded] as it is.
// mem.SliceBuffer's Free does nothing, so gRPC may release the buffers it
// is given without touching the shared bytes.
type codec struct{ proto encoding.CodecV2 }

func newCodec() codec { return codec{proto: encoding.GetCodecV2(proto.Name)} }

func (c codec) Marshal(v any) (mem.BufferSlice, error) {
	if e, ok := v.(*encoded); ok {
		return e.bufs, nil
	}
	return c.proto.Marshal(v)
}

func (c codec) Unmarshal(data mem.BufferSlice, v any) error { return c.proto.Unmarshal(data, v) }

// Name is the proto codec's: clients see no difference.
func (codec) Name() string { return proto.Name }

// sotwResponse is body (a typeSnap's, or a subset's) with nonce.
func sotwResponse(body wire, nonce string) *encoded {
	tail := protowire.AppendTag(make([]byte, 0, len(nonce)+2), respNonce, protowire.BytesType)
	tail = protowire.AppendString(tail, nonce)
	bufs := make(mem.BufferSlice, 0, len(body)+1)
	for _, p := range body {
		bufs = append(bufs, mem.SliceBuffer(p))
	}
	return &encoded{bufs: append(bufs, mem.SliceBuffer(tail))}
}

// subsetBody is the body of a state-of-the-world response that holds only
// the resources of t at the indexes in picked.
func subsetBody(t *typeSnap, picked []int32) wire {
	size := protowire.SizeTag(respVersionInfo) + protowire.SizeBytes(len(t.version)) +
		protowire.SizeTag(respTypeURL) + protowire.SizeBytes(len(t.url))
	for _, i := range picked {
		size += protowire.SizeTag(respResources) + protowire.SizeBytes(t.res[i].any.size())
	}
	b := make([]byte, 0, size)
	b = protowire.AppendTag(b, respVersionInfo, protowire.BytesType)
	b = protowire.AppendString(b, t.version)
	for _, i := range picked {
		b = protowire.AppendTag(b, respResources, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(t.res[i].any.size()))
		b = t.res[i].any.appendTo(b)
	}
	b = protowire.AppendTag(b, respTypeURL, protowire.BytesType)
	return wire{protowire.AppendString(b, t.url)}
}

// deltaResponse is a delta response of t's resources at the indexes in
// picked, the removed names, and nonce: each resource is its head and its
// shared Any.
func deltaResponse(t *typeSnap, picked []int32, removed []string, nonce string) *encoded {
	bufs := make(mem.BufferSlice, 0, 2*len(picked)+1)
	for _, i := range picked {
		bufs = append(bufs, mem.SliceBuffer(t.res[i].deltaHead))
		for _, p := range t.res[i].any {
			bufs = append(bufs, mem.SliceBuffer(p))
		}
	}
	var tail []byte
	tail = protowire.AppendTag(tail, deltaSystemVer, protowire.BytesType)
	tail = protowire.AppendString(tail, t.version)
	tail = protowire.AppendTag(tail, deltaTypeURL, protowire.BytesType)
	tail = protowire.AppendString(tail, t.url)
	tail = protowire.AppendTag(tail, deltaNonce, protowire.BytesType)
	tail = protowire.AppendString(tail, nonce)
	for _, name := range removed {
		tail = protowire.AppendTag(tail, deltaRemoved, protowire.BytesType)
		tail = protowire.AppendString(tail, name)
	}
	return &encoded{bufs: append(bufs, mem.SliceBuffer(tail))}
}

// nonceString is the text of a stream's n-th nonce.
func nonceString(n uint64) string { return strconv.FormatUint(n, 36) }

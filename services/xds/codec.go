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
func sotwResponse(body []byte, nonce string) *encoded {
	tail := protowire.AppendTag(make([]byte, 0, len(nonce)+2), respNonce, protowire.BytesType)
	tail = protowire.AppendString(tail, nonce)
	return &encoded{bufs: mem.BufferSlice{mem.SliceBuffer(body), mem.SliceBuffer(tail)}}
}

// subsetBody is the body of a state-of-the-world response that holds only
// the resources of t at the indexes in picked.
func subsetBody(t *typeSnap, picked []int32) []byte {
	size := protowire.SizeTag(respVersionInfo) + protowire.SizeBytes(len(t.version)) +
		protowire.SizeTag(respTypeURL) + protowire.SizeBytes(len(t.url))
	for _, i := range picked {
		size += protowire.SizeTag(respResources) + protowire.SizeBytes(len(t.res[i].any))
	}
	b := make([]byte, 0, size)
	b = protowire.AppendTag(b, respVersionInfo, protowire.BytesType)
	b = protowire.AppendString(b, t.version)
	for _, i := range picked {
		b = protowire.AppendTag(b, respResources, protowire.BytesType)
		b = protowire.AppendBytes(b, t.res[i].any)
	}
	b = protowire.AppendTag(b, respTypeURL, protowire.BytesType)
	return protowire.AppendString(b, t.url)
}

// deltaResponse is a delta response of t's resources at the indexes in
// picked, the removed names, and nonce: each resource is its head and its
// shared Any.
func deltaResponse(t *typeSnap, picked []int32, removed []string, nonce string) *encoded {
	bufs := make(mem.BufferSlice, 0, 2*len(picked)+1)
	for _, i := range picked {
		bufs = append(bufs, mem.SliceBuffer(t.res[i].deltaHead), mem.SliceBuffer(t.res[i].any))
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

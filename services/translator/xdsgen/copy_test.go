package xdsgen

import (
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestCopiesKeepEveryField fills every field of a Route and a RouteMatch
// (the first member of each oneof) and checks that copyRoute and copyMatch
// keep them all, so that a field Envoy's API gains is not dropped from the
// exact route of a split prefix.
func TestCopiesKeepEveryField(t *testing.T) {
	r := &routev3.Route{}
	fill(r.ProtoReflect())
	if got := copyRoute(r); !proto.Equal(got, r) {
		t.Errorf("copyRoute dropped a field:\n got %v\nwant %v", got, r)
	}
	m := &routev3.RouteMatch{}
	fill(m.ProtoReflect())
	if got := copyMatch(m); !proto.Equal(got, m) {
		t.Errorf("copyMatch dropped a field:\n got %v\nwant %v", got, m)
	}
	if r.GetDecorator() == nil || r.GetStatPrefix() == "" || len(m.GetHeaders()) != 1 || m.GetPrefix() != "x" {
		t.Fatalf("fill left fields unset: %v, %v", r, m)
	}
}

// fill sets every field of m to a value other than its default: a
// non-zero scalar, an empty message, a list or map of one such value.
// Of each oneof it sets the first member.
func fill(m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() && o.Fields().Get(0) != fd {
			continue
		}
		switch {
		case fd.IsList():
			l := m.Mutable(fd).List()
			l.Append(element(fd, l.NewElement()))
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			mp.Set(protoreflect.ValueOf("k").MapKey(), element(fd.MapValue(), mp.NewValue()))
		default:
			m.Set(fd, element(fd, m.NewField(fd)))
		}
	}
}

func element(fd protoreflect.FieldDescriptor, zero protoreflect.Value) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return zero
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("x")
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte("x"))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(1)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(1)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(1)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(1)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(1)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(1)
	default:
		return protoreflect.ValueOfUint64(1)
	}
}

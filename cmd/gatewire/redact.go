package main

import (
	"fmt"

	"github.com/cncf/xds/go/udpa/annotations"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// redacted replaces the value of every sensitive field in what gatewire
// prints: private keys, passwords, session ticket keys.
const redacted = "[redacted]"

var dataSourceName = (&corev3.DataSource{}).ProtoReflect().Descriptor().FullName()

// redact replaces, in m and in the messages it holds (typed configs in
// Anys too), the value of every field Envoy's protos mark
// (udpa.annotations.sensitive) with "[redacted]", as Envoy's own
// /config_dump does: a DataSource becomes an inline string "[redacted]",
// a string or bytes field the word itself. An Any whose type is not
// registered is an error, so nothing is printed that was not looked at.
func redact(m protoreflect.Message) error {
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if sensitive(fd) {
			redactField(m, fd)
			return true
		}
		err = redactValue(m, fd, v)
		return err == nil
	})
	return err
}

func sensitive(fd protoreflect.FieldDescriptor) bool {
	s, _ := proto.GetExtension(fd.Options(), annotations.E_Sensitive).(bool)
	return s
}

// redactField replaces a sensitive field's value.
func redactField(m protoreflect.Message, fd protoreflect.FieldDescriptor) {
	word := func() protoreflect.Value {
		switch {
		case fd.Kind() == protoreflect.StringKind:
			return protoreflect.ValueOfString(redacted)
		case fd.Kind() == protoreflect.BytesKind:
			return protoreflect.ValueOfBytes([]byte(redacted))
		case fd.Message() != nil && fd.Message().FullName() == dataSourceName:
			ds := &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: redacted}}
			return protoreflect.ValueOfMessage(ds.ProtoReflect())
		}
		return protoreflect.Value{}
	}
	v := word()
	switch {
	case !v.IsValid():
		m.Clear(fd) // a sensitive message of another type: drop it whole
	case fd.IsList():
		list := m.Mutable(fd).List()
		for i := 0; i < list.Len(); i++ {
			list.Set(i, word())
		}
	case fd.IsMap():
		m.Clear(fd)
	default:
		m.Set(fd, v)
	}
}

// redactValue walks into the messages a field holds.
func redactValue(m protoreflect.Message, fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	if fd.Message() == nil {
		return nil
	}
	switch {
	case fd.IsList():
		list := v.List()
		for i := 0; i < list.Len(); i++ {
			if err := redactMessage(list.Get(i).Message()); err != nil {
				return err
			}
		}
	case fd.IsMap():
		var err error
		v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
			if fd.MapValue().Message() != nil {
				err = redactMessage(mv.Message())
			}
			return err == nil
		})
		return err
	default:
		return redactMessage(m.Mutable(fd).Message())
	}
	return nil
}

// redactMessage redacts m, opening it first when it is an Any.
func redactMessage(m protoreflect.Message) error {
	a, ok := m.Interface().(*anypb.Any)
	if !ok {
		return redact(m)
	}
	inner, err := a.UnmarshalNew()
	if err != nil {
		return fmt.Errorf("redact %s: %w", a.GetTypeUrl(), err)
	}
	if err := redact(inner.ProtoReflect()); err != nil {
		return err
	}
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(inner)
	if err != nil {
		return err
	}
	a.Value = out
	return nil
}

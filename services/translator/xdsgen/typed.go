package xdsgen

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// typedConfig packs m into an Any after checking it with ValidateAll:
// ValidateAll on a resource does not look inside the Any fields it holds
// (filters, transport sockets, protocol options), so each is checked when
// it is made. It fails with an error wrapping [ErrInvalid].
func typedConfig(m proto.Message) (*anypb.Any, error) {
	if v, ok := m.(validatable); ok {
		if err := v.ValidateAll(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, m.ProtoReflect().Descriptor().FullName(), err)
		}
	}
	a, err := anypb.New(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, m.ProtoReflect().Descriptor().FullName(), err)
	}
	return a, nil
}

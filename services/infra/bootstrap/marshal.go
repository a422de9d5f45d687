package bootstrap

import (
	"bytes"
	"encoding/json"
	"fmt"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	// The typed configs inside a bootstrap; protojson resolves Any by the
	// global registry, so they must be linked in for Marshal and Unmarshal.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/file/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
)

// marshalOptions write the snake_case field names of Envoy's documentation;
// Envoy reads lowerCamelCase too.
var marshalOptions = protojson.MarshalOptions{UseProtoNames: true}

// MarshalJSON returns b as indented proto JSON. The same bootstrap always gives
// the same bytes.
func MarshalJSON(b *bootstrapv3.Bootstrap) ([]byte, error) {
	raw, err := marshalOptions.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("marshal bootstrap: %w", err)
	}
	// protojson varies its whitespace on purpose; re-indent so the output is
	// stable and a file is rewritten only when its meaning changes.
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return nil, fmt.Errorf("indent bootstrap: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// MarshalYAML returns b as YAML with sorted keys, the form Envoy's -c flag reads
// from a file ending in .yaml. The same bootstrap always gives the same bytes.
func MarshalYAML(b *bootstrapv3.Bootstrap) ([]byte, error) {
	raw, err := marshalOptions.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("marshal bootstrap: %w", err)
	}
	out, err := yaml.JSONToYAML(raw)
	if err != nil {
		return nil, fmt.Errorf("bootstrap to yaml: %w", err)
	}
	return out, nil
}

// Unmarshal reads a bootstrap written by MarshalJSON or MarshalYAML (or by
// hand, in YAML or JSON) and checks it with ValidateAll.
func Unmarshal(data []byte) (*bootstrapv3.Bootstrap, error) {
	raw, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("bootstrap yaml: %w", err)
	}
	b := &bootstrapv3.Bootstrap{}
	if err := protojson.Unmarshal(raw, b); err != nil {
		return nil, fmt.Errorf("bootstrap json: %w", err)
	}
	if err := b.ValidateAll(); err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	return b, nil
}

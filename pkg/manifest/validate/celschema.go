package validate

import (
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiserver/pkg/cel/common"
)

// celSchema is a structural schema as CEL reads values of it: the
// apiextensions-apiserver's adapter (model.Structural), except that the
// adapters of its properties, items and additional properties are built
// once, with it, rather than on each call. CEL asks for them on every field
// it reads. It is read-only, and shared by every evaluation.
type celSchema struct {
	*model.Structural
	properties map[string]common.Schema
	items      common.Schema
	additional common.SchemaOrBool
}

var _ common.Schema = (*celSchema)(nil)

// newCELSchema builds the adapters of s and of every schema under it.
func newCELSchema(s *structuralschema.Structural) *celSchema {
	c := &celSchema{Structural: &model.Structural{Structural: s}}
	if s.Properties != nil {
		c.properties = make(map[string]common.Schema, len(s.Properties))
		for name, p := range s.Properties {
			c.properties[name] = newCELSchema(&p)
		}
	}
	if s.Items != nil {
		c.items = newCELSchema(s.Items)
	}
	if ap := s.AdditionalProperties; ap != nil {
		o := &celSchemaOrBool{allows: ap.Bool}
		if ap.Structural != nil {
			o.schema = newCELSchema(ap.Structural)
		}
		c.additional = o
	}
	return c
}

func (c *celSchema) Properties() map[string]common.Schema { return c.properties }

func (c *celSchema) Items() common.Schema { return c.items }

func (c *celSchema) AdditionalProperties() common.SchemaOrBool { return c.additional }

// celSchemaOrBool is additionalProperties: a schema, or whether any value
// is allowed.
type celSchemaOrBool struct {
	schema common.Schema
	allows bool
}

func (o *celSchemaOrBool) Schema() common.Schema { return o.schema }

func (o *celSchemaOrBool) Allows() bool { return o.allows }

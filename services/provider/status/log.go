package status

import (
	"log/slog"
	"strings"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

// Logger returns a subscriber (see Store.Subscribe) that logs one line at
// level debug per change: what a status writer would write, for modes that
// have no status subresource to write to (the file mode).
func Logger(log *slog.Logger) func(Change) {
	return func(c Change) {
		if c.Status == nil {
			log.Debug("status removed", "object", c.Object.String(), "key", c.Key)
			return
		}
		args := []any{"object", c.Object.String(), "key", c.Key,
			"observed_generation", c.Status.GetObservedGeneration()}
		if cs := c.Status.GetConditions(); len(cs) > 0 {
			args = append(args, "conditions", summary(cs))
		}
		for _, l := range c.Status.GetListeners() {
			args = append(args, "listener."+l.GetName(), summary(l.GetConditions()))
		}
		field := "parent."
		if c.Object.Kind == "BackendTLSPolicy" {
			field = "ancestor." // a policy's parents are its status.ancestors
		}
		for _, p := range c.Status.GetParents() {
			ref := p.GetParentRef()
			args = append(args, field+ref.GetNamespace()+"/"+ref.GetName()+sectionOf(ref), summary(p.GetConditions()))
		}
		log.Debug("status", args...)
	}
}

// summary writes conditions as "Accepted=True Programmed=False(Invalid)":
// the reason is shown when the status is not True.
func summary(cs []*busv1.Condition) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		s := c.GetType() + "=" + c.GetStatus()
		if c.GetStatus() != "True" {
			s += "(" + c.GetReason() + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func sectionOf(ref *busv1.ParentRef) string {
	if ref.GetSectionName() == "" {
		return ""
	}
	return "#" + ref.GetSectionName()
}

package gatewayapi

import (
	"regexp"
	"time"

	irv1 "github.com/gatewire/gatewire/proto/gatewire/ir/v1"
	"google.golang.org/protobuf/types/known/durationpb"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gepDuration is the Gateway API duration syntax (GEP-2257): one to four
// numbers of up to five digits, each with a unit h, m, s or ms.
var gepDuration = regexp.MustCompile(`^([0-9]{1,5}(h|m|s|ms)){1,4}$`)

// duration parses a Gateway API duration; nil when d is.
func duration(d *gatewayv1.Duration, field string) (*durationpb.Duration, *problem) {
	if d == nil {
		return nil, nil
	}
	if !gepDuration.MatchString(string(*d)) {
		return nil, unsupported("%s: %q is not a duration such as 10s, 1m30s or 500ms", field, *d)
	}
	v, err := time.ParseDuration(string(*d))
	if err != nil {
		return nil, unsupported("%s: %q: %v", field, *d, err)
	}
	return durationpb.New(v), nil
}

// timeouts translates the timeouts of a rule. A zero duration disables a
// timeout; backendRequest may not be longer than a request timeout.
func timeouts(t *gatewayv1.HTTPRouteTimeouts) (*irv1.Timeouts, *problem) {
	if t == nil {
		return nil, nil
	}
	req, p := duration(t.Request, "timeouts.request")
	if p != nil {
		return nil, p
	}
	backend, p := duration(t.BackendRequest, "timeouts.backendRequest")
	if p != nil {
		return nil, p
	}
	if req != nil && backend != nil && req.AsDuration() != 0 && backend.AsDuration() > req.AsDuration() {
		return nil, unsupported("timeouts.backendRequest: %s is longer than timeouts.request %s", *t.BackendRequest, *t.Request)
	}
	if req == nil && backend == nil {
		return nil, nil
	}
	return &irv1.Timeouts{Request: req, BackendRequest: backend}, nil
}

// retry translates the retry policy of a rule. Attempts 0 in the IR leaves
// the number of retries to Envoy (1); codes must be HTTP error codes.
func retry(r *gatewayv1.HTTPRouteRetry) (*irv1.Retry, *problem) {
	if r == nil {
		return nil, nil
	}
	out := &irv1.Retry{}
	if r.Attempts != nil {
		if *r.Attempts < 1 || *r.Attempts > 100 {
			return nil, unsupported("retry.attempts: %d is not between 1 and 100", *r.Attempts)
		}
		out.Attempts = uint32(*r.Attempts)
	}
	for i, c := range r.Codes {
		if c < 400 || c > 599 {
			return nil, unsupported("retry.codes[%d]: %d is not an HTTP error code (400-599)", i, c)
		}
		out.Codes = append(out.Codes, uint32(c))
	}
	backoff, p := duration(r.Backoff, "retry.backoff")
	if p != nil {
		return nil, p
	}
	out.Backoff = backoff
	return out, nil
}

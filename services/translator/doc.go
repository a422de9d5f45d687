// Package translator is the translator service: it follows the resources
// bucket and publishes, for every Gateway of a gatewire GatewayClass, what
// the gateway means and what its proxies need.
//
// # Buckets
//
//	reads   resources  <Kind>.<namespace or _>.<name>            busv1.Resource
//	writes  ir         <namespace>.<gateway>                     irv1.Gateway
//	writes  xds        <namespace>.<gateway>                     busv1.XdsSnapshot
//	writes  infra      <namespace>.<gateway>                     busv1.Proxy
//	writes  status     <Kind>.<ns or _>.<name>.<gw ns>.<gw>      busv1.Status
//	writes  status     GatewayClass._.<name>.-.-                 busv1.Status
//
// A GatewayClass's status depends on no gateway, so its key names the
// gateway "-" (never a Kubernetes name); see [ClassStatusKey].
//
// # Data flow
//
// The pipeline of one gateway is [Translate]: the [resources.Index] goes
// through package gatewayapi (IR, statuses, proxy spec) and package xdsgen
// (validated xDS snapshot). What does not validate is reported on the
// Gateway (Programmed: False) and its previous xDS snapshot is kept.
//
// The [Service] keeps the index up to date from the resources bucket. Once
// the bucket's initial content is read it translates every gateway (and
// removes outputs that no longer have a gateway); then it gathers changes
// for GATEWIRE_TRANSLATOR_DEBOUNCE after the first one and translates only
// the gateways they affect. Every output is written with the revision of the
// resources bucket it was computed from (bus.WithSourceRevision), and only
// when it differs from what is stored. Each gateway's translation is one
// OpenTelemetry span (tracer "gatewire/translator"), a child of the trace of
// the latest change that affected it.
//
// Gateways are meant to be shared out among replicas; until then every
// replica owns every gateway (see Service.owns).
package translator

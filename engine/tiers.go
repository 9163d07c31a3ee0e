package engine

// Connector is a KV connector: a library an engine loads to move KV cache to and
// from tiers beyond the GPU (LMCache), whose /metrics series appear beside the
// engine's on the same endpoint. It serves nothing itself, so it has no Name.
type Connector struct {
	// Title is how prose names it: "LMCache".
	Title string
	// MetricPrefix starts the names of its /metrics series ("lmcache:").
	MetricPrefix string
	// TierMetrics maps the names, without _total, of its series to what each
	// one measures (the RoleTier roles), as Engine.TierMetrics.
	TierMetrics map[string]Role
}

// Connectors lists the KV connectors whose series ceiling reads.
func Connectors() []Connector {
	return []Connector{LMCache()}
}

// TierMetrics maps every engine's and connector's KV tier series, by name
// without _total, to its role.
func TierMetrics() map[string]Role {
	m := map[string]Role{}
	for _, e := range All() {
		for name, role := range e.TierMetrics {
			m[name] = role
		}
	}
	for _, c := range Connectors() {
		for name, role := range c.TierMetrics {
			m[name] = role
		}
	}
	return m
}

// TierSeries is the name, without _total, of the KV tier series whose role is r
// ("" when no engine or connector has one): how the analysis names what it read.
func TierSeries(r Role) string {
	for name, role := range TierMetrics() {
		if role == r {
			return name
		}
	}
	return ""
}

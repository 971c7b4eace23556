package worldmodel

import "github.com/rivus/collab/policy"

// The families' vocabularies, for the names of triggers, facts and outputs
// in traces and reasons.
var (
	leaseFamily = family("lease")
	turnFamily  = family("turn")
)

func family(name string) policy.Family {
	f, ok := policy.LookupFamily(name)
	if !ok {
		panic("worldmodel: package policy has no family " + name)
	}
	return f
}

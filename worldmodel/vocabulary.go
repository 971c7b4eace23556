package worldmodel

import (
	"sync"

	"github.com/rivus/collab/policy"
)

// The families' vocabularies, for the names of triggers, facts and outputs
// in traces and reasons. Each is looked up (a copy) at its first use, not
// when the package is initialised: every process of the command line
// links this package, and `collab lock` never checks a world.
var (
	laneFamily  = sync.OnceValue(func() policy.Family { return family("lane") })
	leaseFamily = sync.OnceValue(func() policy.Family { return family("lease") })
	turnFamily  = sync.OnceValue(func() policy.Family { return family("turn") })
)

// waives reports whether p gives up the guarantee of fam whose invariant
// is inv: its world then neither checks it nor stops at a world that
// breaks it.
func waives(p policy.Policy, fam policy.Family, inv string) bool {
	prop, ok := fam.Property(inv)
	return ok && prop.Guarantee && p.Table().Waives(prop.Name)
}

func family(name string) policy.Family {
	f, ok := policy.LookupFamily(name)
	if !ok {
		panic("worldmodel: package policy has no family " + name)
	}
	return f
}

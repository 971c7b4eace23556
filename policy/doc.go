// Package policy is the small interface through which the runtime packages
// (plock, lease, lanes) and the model checker drive a state machine policy,
// and the data types that describe one.
//
// A policy is pure: [Policy.Step] maps a state, a trigger and the facts the
// runtime observed at that moment to the next state, the outputs the runtime
// must carry out, and a [Verdict]. It does no I/O and keeps no state, so the
// runtime keeps each instance's [StateID] and changes it only through Step,
// and the model checker can explore every reachable world.
//
// Policies are generated from spec files (see the spec directory) by the
// generator in package gen. Every policy of one family (see [LookupFamily])
// numbers its triggers, facts and outputs in the family's order, so the
// runtime can drive any of them, a user's custom policy too, with the same
// IDs. Those IDs are typed constants of this package, generated from the
// families into vocabulary_gen.go: [LaneWake], [LaneFactSlotFree],
// [LaneOutputStart], and so on for the lease and turn families. The runtime
// fires and tests them, and the Step function generated for a machine of a
// family switches on them, so the two cannot disagree on a number. States
// are the policy's own: the runtime never switches on them.
//
// [Table] is the transition table as plain data, and [Table.Step] interprets
// it; generated code is tested against that interpretation, and programs that
// load a table without generated code (docs, the model checker) use it.
package policy

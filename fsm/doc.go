// Package fsm holds the policies generated from the specs in the spec
// directory, and nothing else: turn (one task's turn at a process lock
// inside its process), lane (one key's activation cycle inside lanes) and
// lease (one lease handle's lifecycle and an observer's takeover decision).
// It imports package policy alone, so a program that uses a runtime package
// links no generator, model checker or reference interpreter.
//
// For each machine M the generator writes m_gen.go: the MState type and its
// constants, the allocation-free MStep function, the table as data, and the
// policy value MPolicy that the runtime packages drive. The triggers, facts
// and outputs are the family's, typed constants of package policy
// (policy.LaneWake, policy.LaneFactSlotFree, policy.LaneOutputStart, ...),
// which the runtime uses too. m_gen_test.go configures the equivalent
// github.com/qmuntal/stateless machine, the test oracle: it checks MStep
// against that machine and the table on every state, trigger and fact
// assignment, and BenchmarkMStep reports how much faster MStep is. m.dot
// and m.mmd are the diagrams.
//
// Do not edit these files: edit the spec and run go generate (see
// generate.go). The world models that check any policy of a family live in
// package worldmodel, which nothing in the runtime imports.
package fsm

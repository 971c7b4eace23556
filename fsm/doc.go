// Package fsm holds the policies generated from the specs in the spec
// directory: turn (one task's turn at a process lock inside its process),
// lane (one key's activation cycle inside lanes) and lease (one lease
// handle's lifecycle and an observer's takeover decision).
//
// For each machine M the generator writes m_gen.go: the MState and MTrigger
// types, the MFacts and MOutputs bit sets, the allocation-free MStep
// function, the table as data (MTable), the policy value MPolicy that the
// runtime packages drive, and NewMStateless, the equivalent
// github.com/qmuntal/stateless machine. m_gen_test.go checks MStep against
// that machine and the table on every state, trigger and fact assignment;
// m.dot and m.mmd are the diagrams.
//
// Do not edit the generated files: edit the spec and run go generate (see
// generate.go). BenchmarkStep compares a generated Step with the stateless
// machine firing the same transitions.
package fsm

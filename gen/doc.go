// Package gen turns a state machine spec into a Go policy: it parses the
// spec (Parse), checks it (Validate), and writes the code, its differential
// test and its diagrams (Generate). The command gen/cmd/fsmgen runs it on
// spec files, in this repository through go generate and in a user's own
// module on a custom policy.
//
// # The spec language
//
// One machine per file, one statement per line. "#" starts a comment to
// the end of the line; lines that start with "##" (but not "###") are doc comments, which
// attach to the declaration on the next line (a blank or comment line in
// between detaches them). Names are [A-Za-z][A-Za-z0-9_]*; by convention
// states and triggers are UpperCamel, facts and outputs lowerCamel. The
// words machine, family, trigger, fact, output, state, initial, ignore and
// reject are keywords, not names.
//
//	## Lane is one key's activation cycle.
//	machine Lane family lane      # `family NAME` is optional
//	trigger Wake                  # one declaration a line
//	fact slotFree
//	output start
//	state Idle initial            # exactly one state is initial
//	state Running
//
//	Idle    --Wake [slotFree] / start --> Running   # From --Trigger [guard] / outputs --> To
//	Idle    --Wake [!slotFree]                       # no target: internal, the state stays
//	Running --Wake --> Running                       # the same target: a re-entry
//	Running ignore Cancel, Close                     # state unchanged, no outputs
//	Idle    reject Cancel                            # Step reports a rejection
//
// A guard is a conjunction of fact literals (fact or !fact); none, or [],
// always holds. Outputs follow "/" as a comma list; with none, leave out
// the "/".
//
// # The rules
//
// Validate reports every violation as an *Error of its own Kind at a
// file:line:col position, collected in an ErrorList:
//
//   - syntax: the line does not follow the grammar;
//   - duplicate: a name declared twice, a fact twice in one guard, an
//     output twice in one row, a pair ignored twice, or two names that
//     would get one Go name;
//   - unknown: a reference to an undeclared state, trigger, fact, output
//     or family;
//   - initial: not exactly one initial state;
//   - unreachable: a state no sequence of rows leads to from the initial
//     state;
//   - nondeterministic: two rows of one state and trigger whose guards can
//     hold together, with the facts that make them;
//   - incomplete: a state and trigger, neither ignored nor rejected, and a
//     fact assignment that no row handles;
//   - conflict: a pair both ignored and rejected, or ignored or rejected
//     and handled by a row;
//   - family: a family spec whose triggers, facts or outputs are not
//     exactly its family's (policy.LookupFamily);
//   - limit: more than 255 states or triggers, 16 facts or 64 outputs;
//   - unused: outside a family, a trigger, fact or output nothing uses.
//
// States are numbered in declaration order. Triggers, facts (bit
// positions) and outputs (bit positions) are numbered in declaration order,
// or for a family spec in the family's order, so that every policy of a
// family numbers its vocabulary alike.
//
// # The generated code
//
// For machine Lane in package p, Generate writes lane_gen.go with LaneState
// and LaneTrigger (String like stringer's), LaneFacts and LaneOutputs (bit
// sets; constants LaneFactSlotFree, LaneOutputStart), the allocation-free
// switch LaneStep, LaneTable (the table as policy.Table data), LanePolicy (a
// policy.Policy), and NewLaneStateless and ConfigureLaneStateless, which
// build the equivalent github.com/qmuntal/stateless machine;
// lane_gen_test.go, which requires LaneStep, the stateless machine, the
// table interpreter and LanePolicy to agree on every state, trigger and
// fact assignment; and lane.dot and lane.mmd, the Graphviz and Mermaid
// diagrams with edges labelled "Trigger [guard] / outputs". The output is
// gofmt'ed and the same bytes for the same spec.
package gen

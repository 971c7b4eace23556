package worldmodel_test

import (
	"fmt"

	"github.com/rivus/collab/fsm"
	"github.com/rivus/collab/modelcheck"
	"github.com/rivus/collab/worldmodel"
)

// A policy is checked against its family's world before it ships: here
// the shipped lane policy, at the lane family's default bounds.
func ExampleCheckPolicy() {
	rep, err := worldmodel.CheckPolicy(fsm.LanePolicy, modelcheck.Options{MaxStates: 1_000_000})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Policy, rep.Family, rep.Verdict)
	// Output: Lane lane passed
}

// A spec of a custom policy is parsed, validated and checked in one call;
// its errors name the file and line.
func ExampleCheckSpec() {
	src := []byte("machine Lane family lane\nstate Idle initial\nIdle --Wake--> Busy\n")
	_, err := worldmodel.CheckSpec("mylane.fsm", src, modelcheck.Options{})
	fmt.Println(err)
	// Output: mylane.fsm:1:21: family lane has trigger Wake, which the spec does not declare (and 23 more errors)
}

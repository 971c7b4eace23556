package gen_test

import (
	"errors"
	"fmt"

	"github.com/rivus/collab/gen"
)

const doorSpec = `## Door opens unless it is locked.
machine Door
trigger Push
fact locked
output open
output beep
state Closed initial
state Open
Closed --Push [!locked] / open --> Open
Closed --Push [locked] / beep
Open ignore Push
`

// Generate a policy from a spec: the files fsmgen would write.
func ExampleGenerate() {
	spec, err := gen.Parse("door.fsm", []byte(doorSpec))
	if err != nil {
		panic(err)
	}
	table, err := gen.Validate(spec)
	if err != nil {
		panic(err)
	}
	files, err := gen.Generate(table, "door")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		fmt.Println(f.Name)
	}
	r := table.Step(0, 0, 1) // Push in Closed while locked
	fmt.Println(table.States[r.Next].Name, r.Verdict, r.Outputs)
	// Output:
	// door_gen.go
	// door_gen_test.go
	// door.dot
	// door.mmd
	// Closed fired 2
}

// Validation errors name the file, line and column, one per problem.
func ExampleValidate() {
	src := doorSpec[:len(doorSpec)-len("Closed --Push [locked] / beep\nOpen ignore Push\n")]
	spec, err := gen.Parse("door.fsm", []byte(src))
	if err != nil {
		panic(err)
	}
	_, err = gen.Validate(spec)
	var list gen.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Printf("%s (%s)\n", e, e.Kind)
		}
	}
	// Output:
	// door.fsm:6:8: output beep is declared but no row emits it (unused)
	// door.fsm:8:7: state Open does not handle trigger Push: add a row, or `Open ignore Push`, or `Open reject Push` (incomplete)
	// door.fsm:9:1: in Closed, no row handles Push when [locked]: add a row, or cover it with the guards (incomplete)
}

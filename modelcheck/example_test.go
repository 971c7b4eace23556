package modelcheck_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/rivus/collab/modelcheck"
)

// A counter that must stay below 3, but can reach it.
func Example() {
	m := modelcheck.Model[int]{
		Name: "counter",
		Init: []int{0},
		Next: func(w int, yield func(string, int)) {
			if w < 5 {
				yield("add one", w+1)
			}
		},
		Invariants: []modelcheck.Invariant[int]{{
			Name: "below three",
			Check: func(w int) error {
				if w >= 3 {
					return errors.New("reached three")
				}
				return nil
			},
		}},
	}
	r := modelcheck.Check(m, modelcheck.Options{})
	fmt.Println(r.Verdict, r.States)
	r.Violation.WriteTrace(os.Stdout, func(w int) string { return fmt.Sprintf("counter=%d", w) })
	// Output:
	// violated 4
	// violation of "below three": reached three
	//   0. init
	//      counter=0
	//   1. add one
	//      counter=1
	//   2. add one
	//      counter=2
	//   3. add one
	//      counter=3
}

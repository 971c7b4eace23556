// Command fsmgen generates Go state machine policies from spec files.
//
// Usage:
//
//	fsmgen [-out dir] [-pkg name] [-spec file.fsm]... [file.fsm]...
//
// For each spec, whose machine is M (m in lower case), it writes into the
// output directory m_gen.go (the policy), m_gen_test.go (its differential
// test against github.com/qmuntal/stateless), m.dot and m.mmd (diagrams).
// Files whose contents would not change are left alone. Nothing is written
// unless every spec is valid. The generated test imports
// github.com/qmuntal/stateless, which the module must require.
//
// fsmgen does not model-check the policies: `collab check SPEC` does, and
// `collab gen`, the same generator, checks each policy of a family first
// and writes nothing if one fails (unless -unchecked).
//
// Errors in specs are printed one per line as file:line:col: message, and
// the exit status is 1. A typical use is a go:generate line:
//
//	//go:generate go run github.com/rivus/collab/gen/cmd/fsmgen -spec my.fsm -out . -pkg mypolicy
package main

import (
	"io"
	"os"

	"github.com/rivus/collab/gen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run is the command with its arguments and error output; it returns the
// exit status.
func run(args []string, stderr io.Writer) int { return gen.Main("fsmgen", args, stderr) }

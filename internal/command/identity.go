package command

import (
	"fmt"
	"io"

	"github.com/rivus/collab/platform"
)

// RunIdentity is `collab identity`: this process's identity, and how it
// judges itself.
func RunIdentity(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "collab identity: takes no arguments")
		return 2
	}
	p := Host()
	self, err := p.Process.Self()
	if err != nil {
		fmt.Fprintf(stderr, "collab identity: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", self.Marshal())
	v := p.Process.Judge(self)
	fmt.Fprintf(stdout, "%s: %s (%s)\n", self, v.Liveness, v.Reason)
	return 0
}

// RunJudge is `collab judge`: a stored identity judged from this
// process table.
func RunJudge(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: collab judge STAMP|-")
		return 2
	}
	data := []byte(args[0])
	if args[0] == "-" {
		var err error
		if data, err = io.ReadAll(io.LimitReader(stdin, 1<<16)); err != nil {
			fmt.Fprintf(stderr, "collab judge: read stdin: %v\n", err)
			return 1
		}
	}
	id, err := platform.ParseIdentity(data)
	if err != nil {
		fmt.Fprintf(stderr, "collab judge: %v\n", err)
		return 1
	}
	v := Host().Process.Judge(id)
	fmt.Fprintf(stdout, "%s: %s (%s)\n", id, v.Liveness, v.Reason)
	return 0
}

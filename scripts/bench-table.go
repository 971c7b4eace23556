//go:build ignore

// bench-table writes the README's benchmark table from `go test -bench`
// output: every benchmark with its ns/op and the metrics it reports (its
// ratio to the in-process floor first), and the machine the figures came
// from. make bench runs it on the output of every package's benchmarks
// and of the bench module's.
//
//	go run scripts/bench-table.go README.md < bench.txt
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

const (
	begin = "<!-- bench:begin -->"
	end   = "<!-- bench:end -->"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/bench-table.go README.md < bench.txt")
		os.Exit(2)
	}
	table, err := render(bufio.NewScanner(os.Stdin))
	if err != nil {
		fail(err)
	}
	readme, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	s := string(readme)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		fail(fmt.Errorf("%s has no %s ... %s section", os.Args[1], begin, end))
	}
	out := s[:i+len(begin)] + "\n" + table + s[j:]
	if err := os.WriteFile(os.Args[1], []byte(out), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench-table:", err)
	os.Exit(1)
}

// render makes the table: a line a benchmark, its package's name before
// it, and the machine after.
func render(sc *bufio.Scanner) (string, error) {
	var b strings.Builder
	var cpu, pkg string
	b.WriteString("| benchmark | ns/op | ratio | other metrics |\n|---|---:|---:|---|\n")
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "cpu: "):
			cpu = strings.TrimSpace(strings.TrimPrefix(line, "cpu: "))
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimPrefix(strings.TrimPrefix(line, "pkg: "), "github.com/rivus/collab/")
		case strings.HasPrefix(line, "Benchmark"):
			f := strings.Fields(line)
			if len(f) < 4 {
				continue
			}
			name := strings.TrimPrefix(f[0], "Benchmark")
			if k := strings.LastIndex(name, "-"); k > 0 {
				name = name[:k] // the GOMAXPROCS suffix
			}
			var nsop, ratio string
			var other []string
			for k := 2; k+1 < len(f); k += 2 {
				switch v, unit := f[k], f[k+1]; unit {
				case "ns/op":
					nsop = v
				case "ratio":
					ratio = v
				case "B/op", "allocs/op":
				default:
					other = append(other, v+" "+unit)
				}
			}
			fmt.Fprintf(&b, "| %s `%s` | %s | %s | %s |\n", pkg, name, nsop, ratio, strings.Join(other, ", "))
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "\nMeasured by `make bench` on %s, %d cores (%s/%s).\n", cpu, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	return b.String(), nil
}

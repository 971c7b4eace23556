package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
)

// goTest runs go test -json over pkgs in dir, with the flags flags
// (-race, -tags ...), bounded by limit: go test's own timeout, so that a
// hanging test is reported by go test with its stack. The bound of the
// whole command adds time to build the packages, and fires only when the
// build itself hangs.
func goTest(ctx context.Context, dir string, flags, pkgs []string, limit time.Duration) ran {
	args := append([]string{"test", "-json", "-count=1", "-trimpath", "-timeout", limit.String()}, flags...)
	return runBounded(ctx, dir, nil, limit+2*time.Minute, goCommand(), append(args, pkgs...)...)
}

// withImporters returns pkgs (./-relative package paths of the module in
// dir) and the module's packages that import one of them directly, or
// whose tests do, sorted: a bug in a package often shows in the tests of
// its users. With transitive, the packages that import those too, and so
// on: every package whose tests the bug can reach.
func withImporters(ctx context.Context, dir string, pkgs []string, transitive bool) ([]string, error) {
	graph, err := listPackages(ctx, dir, "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}", "./...")
	if err != nil {
		return nil, err
	}
	out := slices.Clone(pkgs)
	for grew := true; grew; grew = grew && transitive {
		grew = false
		for _, fields := range graph {
			if slices.Contains(out, fields[0]) {
				continue
			}
			for _, imp := range fields[1:] {
				if slices.Contains(out, imp) {
					out, grew = append(out, fields[0]), true
					break
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// listPackages runs go list -f format over patterns in dir and returns,
// a line a package, the line's fields that name packages of this module,
// ./-relative; the first field is the package's.
func listPackages(ctx context.Context, dir, format string, patterns ...string) ([][]string, error) {
	res := runBounded(ctx, dir, nil, 2*time.Minute, goCommand(), append([]string{"list", "-f", format}, patterns...)...)
	if res.code != 0 {
		return nil, errors.New("go list: " + failure(res))
	}
	const module = "github.com/rivus/collab"
	var lines [][]string
	for line := range strings.SplitSeq(strings.TrimSpace(res.stdout), "\n") {
		var fields []string
		for _, ip := range strings.Fields(line) {
			if ip == module || strings.HasPrefix(ip, module+"/") {
				fields = append(fields, "./"+strings.TrimPrefix(strings.TrimPrefix(ip, module), "/"))
			}
		}
		if len(fields) > 0 {
			lines = append(lines, fields)
		}
	}
	return lines, nil
}

// monitoredFor returns the packages of the monitored patterns whose tests
// a change of pkgs can reach (see withImporters): a mutant of the
// history checker, which no monitored package uses, runs none of them.
func monitoredFor(ctx context.Context, dir string, monitored, pkgs []string) ([]string, error) {
	reach, err := withImporters(ctx, dir, pkgs, true)
	if err != nil {
		return nil, err
	}
	lines, err := listPackages(ctx, dir, "{{.ImportPath}}", monitored...)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, fields := range lines {
		if slices.Contains(reach, fields[0]) {
			out = append(out, fields[0])
		}
	}
	return out, nil
}

// monitorLayer runs the tests of pkgs in dir with the contract monitors
// on, and reports what happened: a monitor's report in the output of a
// run that failed is a catch; a run that passed missed; any other failure
// (a test that failed, a panic, a hang, a build that failed) is no catch
// and no miss, and is reported as what it was, with the test, and for a
// hang the stack of the test that hung.
func monitorLayer(ctx context.Context, dir string, pkgs []string, limit time.Duration) layerResult {
	res := goTest(ctx, dir, []string{"-tags", "collabmonitor"}, pkgs, limit)
	lr := layerResult{took: res.took}
	switch {
	case res.timedOut, res.startErr != nil:
		lr.status, lr.detail = broken, failure(res)
	case res.code == 0:
		lr.status = missed
	case monitorReport(res.stdout) != "":
		lr.status, lr.detail = caught, monitorReport(res.stdout)
	default:
		lr.status, lr.detail = broken, "no monitor's report: "+testFailures(res.stdout)
		if d := testFailures(res.stdout); d == "" {
			lr.detail = "no monitor's report: " + failure(res)
		}
	}
	return lr
}

// monitorMark is in the first line of every contract monitor's report.
const monitorMark = ": contract monitor: "

// monitorReport returns the first line of a contract monitor's report in
// go test -json output, or "".
func monitorReport(out string) string {
	for e := range testEvents(out) {
		if e.Action == "output" && strings.Contains(e.Output, monitorMark) {
			return strings.TrimSpace(e.Output)
		}
	}
	return ""
}

// testEvent is a line of go test -json.
type testEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
}

// testEvents yields the events of go test -json output, skipping lines
// that are not events.
func testEvents(out string) func(func(testEvent) bool) {
	return func(yield func(testEvent) bool) {
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e testEvent
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Package != "" && !yield(e) {
				return
			}
		}
	}
}

// pkgFail is what testFailures learns of one package.
type pkgFail struct {
	tests    []string
	panicked string // the test that panicked, if one did
	timedOut bool
	running  string   // the first test running when the timeout struck
	listing  bool     // the output lists the running tests
	stack    []string // the output after the timeout, for the hung test's frames
	build    bool
	failed   bool
}

// testFailures names what failed in go test -json output, by package:
// its top-level tests that failed, the test that panicked, the test a
// timeout stopped (with the frames it was stuck in), a build failure.
func testFailures(out string) string {
	fails := map[string]*pkgFail{}
	var order []string
	for e := range testEvents(out) {
		pkg := strings.TrimPrefix(e.Package, "github.com/rivus/collab/")
		f := fails[pkg]
		if f == nil {
			f = &pkgFail{}
			fails[pkg] = f
			order = append(order, pkg)
		}
		line := strings.TrimSpace(e.Output)
		switch {
		case e.Action == "fail" && e.Test == "":
			f.failed, f.build = true, e.FailedBuild != ""
		case e.Action == "fail" && !strings.Contains(e.Test, "/") && !slices.Contains(f.tests, e.Test):
			f.tests = append(f.tests, e.Test)
		case e.Action != "output":
		case strings.HasPrefix(line, "panic: test timed out"):
			f.timedOut = true
		case strings.HasPrefix(line, "panic: ") && f.panicked == "" && !f.timedOut:
			f.panicked = e.Test
			if f.panicked == "" {
				f.panicked = "?"
			}
		case f.timedOut && line == "running tests:":
			f.listing = true
		case f.listing && line != "" && f.running == "":
			f.running, _, _ = strings.Cut(line, " ")
		case f.listing && line == "":
			f.listing = false
		case f.timedOut:
			f.stack = append(f.stack, line)
		}
	}
	var parts []string
	for _, pkg := range order {
		if f := fails[pkg]; f.failed {
			parts = append(parts, pkg+": "+f.String())
		}
	}
	return strings.Join(parts, "; ")
}

// String says what failed in the package.
func (f *pkgFail) String() string {
	what := strings.Join(f.tests, ", ")
	var end string
	switch {
	case f.build:
		end = "build failed"
	case f.timedOut && f.running != "":
		end = "hung: timed out in " + f.running + hungFrames(f.stack, f.running)
	case f.timedOut:
		end = "hung: timed out"
	case f.panicked != "":
		end = "panic in " + f.panicked
	case what == "":
		end = "failed outside any test"
	}
	switch {
	case what == "":
		return end
	case end != "":
		return what + ", then " + end
	}
	return what
}

// hungFrames returns, from a timeout's goroutine dump, the frames above
// the test function test in the stack that runs it: where it hung.
func hungFrames(dump []string, test string) string {
	for i, line := range dump {
		if !strings.Contains(line, "."+test+"(") {
			continue
		}
		start := i
		for start > 0 && !strings.HasPrefix(dump[start-1], "goroutine ") {
			start--
		}
		var frames []string
		for _, l := range dump[start:i] {
			if strings.HasSuffix(l, ")") { // a call, not its file:line
				frames = append(frames, l)
			}
		}
		if len(frames) > 0 {
			return " at " + strings.Join(frames, " < ")
		}
	}
	return ""
}

package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// mutant is one planted bug: a patch and what it touches.
type mutant struct {
	name  string   // the patch's file name without .patch
	desc  string   // the patch's first line
	patch string   // the patch file's path; "" for the baseline
	files []string // the paths the patch changes, slash-separated
	// tests are the packages whose unit tests run ("./lease/sqlite"):
	// those of the Go files it changes, and for a spec the generated
	// policies and the runtime that drives them.
	tests []string
}

// specRuntime is the runtime package that drives the policy of each
// shipped spec, whose tests run when a mutant changes the spec.
var specRuntime = map[string]string{"turn": "./plock", "lane": "./lanes", "lease": "./lease"}

// loadMutants reads every *.patch of dir, sorted by name.
func loadMutants(dir string) ([]mutant, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.patch"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no mutants (*.patch) in %s", dir)
	}
	slices.Sort(paths)
	var ms []mutant
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		m, err := parseMutant(strings.TrimSuffix(filepath.Base(p), ".patch"), string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(p), err)
		}
		m.patch = p
		ms = append(ms, m)
	}
	return ms, nil
}

// parseMutant reads a patch: its first line describes the bug, a diff
// follows.
func parseMutant(name, text string) (mutant, error) {
	first, _, _ := strings.Cut(text, "\n")
	first = strings.TrimSpace(first)
	if first == "" || strings.HasPrefix(first, "diff ") || strings.HasPrefix(first, "--- ") {
		return mutant{}, errors.New("the first line must describe the bug, before the diff")
	}
	m := mutant{name: name, desc: first}
	for line := range strings.SplitSeq(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "diff --git a/"); ok {
			if _, b, ok := strings.Cut(rest, " b/"); ok && !slices.Contains(m.files, b) {
				m.files = append(m.files, b)
			}
		}
	}
	if len(m.files) == 0 {
		return mutant{}, errors.New("no diff --git in the patch")
	}
	m.tests = testPackages(m.files)
	return m, nil
}

// testPackages returns the packages whose tests judge a change of files.
func testPackages(files []string) []string {
	var pkgs []string
	for _, f := range files {
		dir := path.Dir(f)
		switch {
		case strings.HasSuffix(f, ".go"):
			pkgs = append(pkgs, "./"+dir)
		case dir == "spec" && strings.HasSuffix(f, ".fsm"):
			pkgs = append(pkgs, "./fsm")
			if rt, ok := specRuntime[strings.TrimSuffix(path.Base(f), ".fsm")]; ok {
				pkgs = append(pkgs, rt)
			}
		}
	}
	slices.Sort(pkgs)
	return slices.Compact(pkgs)
}

// needsPostgres: the mutant changes lease/postgres, whose tests and
// campaign need a server.
func (m mutant) needsPostgres() bool {
	return slices.ContainsFunc(m.files, func(f string) bool { return strings.HasPrefix(f, "lease/postgres/") })
}

// storeDirs are the stores the campaign runs on, by the directory of
// their code: a mutant there can affect that store alone.
var storeDirs = map[string]string{"lease/sqlite/": "sqlite", "lease/file/": "file", "lease/postgres/": "postgres"}

// campaignStores returns the stores of all a campaign of m runs on: the
// stores whose code m changes, when it changes only stores' code, else
// all of them (the baseline's too).
func (m mutant) campaignStores(all []string) []string {
	if len(m.files) == 0 {
		return all
	}
	var stores []string
	for _, f := range m.files {
		store := ""
		for dir, name := range storeDirs {
			if strings.HasPrefix(f, dir) {
				store = name
			}
		}
		if store == "" {
			return all
		}
		if !slices.Contains(stores, store) {
			stores = append(stores, store)
		}
	}
	return stores
}

// changesSpec: fsm/ must be generated again after the patch.
func (m mutant) changesSpec() bool {
	return slices.ContainsFunc(m.files, func(f string) bool { return strings.HasPrefix(f, "spec/") })
}

func (m mutant) packages() []string { return m.tests }

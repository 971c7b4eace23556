package gen

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"

	"github.com/rivus/collab/policy"
)

// specList collects repeated -spec flags.
type specList []string

func (l *specList) String() string { return fmt.Sprint(*l) }

func (l *specList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// Main is the generator's command line, as fsmgen runs it: name prefixes
// its messages, args are the arguments after the command's name, and
// errors go to stderr. It returns the exit status: 0, 1 for invalid specs
// or failed writes, 2 for bad usage. It does not model-check the
// policies it writes (package gen cannot: the model checker imports it);
// MainChecked does.
func Main(name string, args []string, stderr io.Writer) int {
	return MainChecked(name, args, stderr, nil)
}

// Checker judges a valid spec's table before anything is written, as the
// model checker does for `collab gen`: an error keeps every file unwritten
// and is printed; a note (say, that a spec of no family has no world to
// check it in) is printed and writing goes on.
type Checker func(spec string, t *policy.Table) (note string, err error)

// stateless is the module the generated tests import, which a user's
// module must require.
const stateless = "github.com/qmuntal/stateless"

// MainChecked is Main with check run on every spec's table before any file
// is written; its flag -unchecked skips check, and says so. A nil check
// is Main.
func MainChecked(name string, args []string, stderr io.Writer, check Checker) int {
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [-out dir] [-pkg name] [-spec file.fsm]... [file.fsm]...\n\n"+
			"Writes, for each spec of machine M (m in lower case), m_gen.go (the policy, which imports\n"+
			"github.com/rivus/collab/policy), m_gen_test.go (its test against the table and against\n"+
			"%s, which your module must require: go get %s), m.dot and m.mmd.\n", name, stateless, stateless)
		if check == nil {
			fmt.Fprintf(stderr, "It does not model-check the policies: collab check does, and collab gen checks before it writes.\n")
		} else {
			fmt.Fprintf(stderr, "It model-checks each policy of a family first, as collab check does, and writes nothing if one fails.\n")
		}
		fmt.Fprintln(stderr)
		flags.PrintDefaults()
	}
	var unchecked *bool
	if check != nil {
		unchecked = flags.Bool("unchecked", false, "write the policies without model-checking them first")
	}
	var specs specList
	flags.Var(&specs, "spec", "a spec file (repeatable; spec files may also follow the flags)")
	out := flags.String("out", ".", "the directory to write the generated files into")
	pkg := flags.String("pkg", "", "the Go package name of the generated files (default: $GOPACKAGE when -out is \".\", else the directory's name)")
	vocabulary := flags.Bool("vocabulary", false, "write package policy's "+VocabularyFile+" (the families' constants) into -out instead of generating specs")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *vocabulary {
		return writeVocabulary(name, *out, stderr)
	}
	specs = append(specs, flags.Args()...)
	if len(specs) == 0 {
		fmt.Fprintf(stderr, "%s: no spec files; usage: %s [-out dir] [-pkg name] [-spec file.fsm]... [file.fsm]...\n", name, name)
		return 2
	}
	pkgName, err := packageName(*pkg, *out)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	files, ok := generateAll(name, specs, pkgName, stderr)
	if !ok {
		return 1
	}
	switch {
	case check == nil:
	case *unchecked:
		fmt.Fprintf(stderr, "%s: -unchecked: the policies were not model-checked; collab check does\n", name)
	case !checkAll(name, specs, check, stderr):
		return 1
	}
	if err := writeFiles(*out, files); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// writeVocabulary writes the families' constants into dir.
func writeVocabulary(name, dir string, stderr io.Writer) int {
	f, err := GenerateVocabulary(policy.Families())
	if err == nil {
		err = writeFiles(dir, []File{f})
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// packageName picks the package name: the flag, else $GOPACKAGE (set by go
// generate) when writing into the current directory, else the directory's
// base name.
func packageName(flagValue, out string) (string, error) {
	name := flagValue
	if name == "" && filepath.Clean(out) == "." {
		name = os.Getenv("GOPACKAGE")
	}
	if name == "" {
		abs, err := filepath.Abs(out)
		if err != nil {
			return "", err
		}
		name = filepath.Base(abs)
	}
	if !token.IsIdentifier(name) {
		return "", fmt.Errorf("package name %q is not a Go identifier: set -pkg", name)
	}
	return name, nil
}

// generateAll generates every spec, printing all errors; ok is false if
// there were any.
func generateAll(name string, specs []string, pkg string, stderr io.Writer) (files []File, ok bool) {
	ok = true
	from := map[string]string{} // file name -> spec that generates it
	for _, path := range specs {
		src, err := os.ReadFile(path)
		if err == nil {
			var fs []File
			fs, err = GenerateSpec(path, src, pkg)
			files = append(files, fs...)
			for _, f := range fs {
				if prev, dup := from[f.Name]; dup {
					err = fmt.Errorf("%s and %s both generate %s: rename a machine", prev, path, f.Name)
					break
				}
				from[f.Name] = path
			}
		}
		if err != nil {
			report(stderr, name, err)
			ok = false
		}
	}
	return files, ok
}

// checkAll runs check on every spec, which generateAll found valid,
// printing each note and error; ok is false if any failed.
func checkAll(name string, specs []string, check Checker, stderr io.Writer) (ok bool) {
	ok = true
	for _, path := range specs {
		src, err := os.ReadFile(path)
		if err != nil {
			report(stderr, name, err)
			return false
		}
		spec, err := Parse(path, src)
		var table *policy.Table
		if err == nil {
			table, err = Validate(spec)
		}
		var note string
		if err == nil {
			note, err = check(path, table)
		}
		if note != "" {
			fmt.Fprintf(stderr, "%s: %s: %s\n", name, path, note)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %s: %v\n", name, path, err)
			ok = false
		}
	}
	if !ok {
		fmt.Fprintf(stderr, "%s: nothing written: a policy failed its check (-unchecked writes it anyway)\n", name)
	}
	return ok
}

// report prints spec errors one per line, and any other error prefixed
// with the command's name.
func report(w io.Writer, name string, err error) {
	var list ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(w, e)
		}
		return
	}
	fmt.Fprintf(w, "%s: %v\n", name, err)
}

// writeFiles writes the files into dir, skipping those already up to date
// so that their modification times stay.
func writeFiles(dir string, files []File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, f.Data) {
			continue
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

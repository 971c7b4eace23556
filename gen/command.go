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

// Main is the generator's command line, shared by fsmgen and `collab gen`:
// name prefixes its messages, args are the arguments after the command's
// name, and errors go to stderr. It returns the exit status: 0, 1 for
// invalid specs or failed writes, 2 for bad usage.
func Main(name string, args []string, stderr io.Writer) int {
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	flags.SetOutput(stderr)
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

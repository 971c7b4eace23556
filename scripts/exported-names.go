//go:build ignore

// exported-names counts the names a package exports: its top-level
// exported types, functions, constants and variables (methods and test
// files aside), and lists them with -v.
//
//	go run scripts/exported-names.go [-v] DIR...
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "list the names")
	flag.Parse()
	status := 0
	for _, dir := range flag.Args() {
		names, err := exported(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			status = 1
			continue
		}
		fmt.Printf("%s: %d\n", dir, len(names))
		if *verbose {
			fmt.Println("  " + strings.Join(names, " "))
		}
	}
	os.Exit(status)
}

func exported(dir string) ([]string, error) {
	notTest := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, notTest, 0)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil && d.Name.IsExported() {
						names = append(names, d.Name.Name)
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								names = append(names, s.Name.Name)
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									names = append(names, n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	return names, nil
}

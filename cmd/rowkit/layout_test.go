package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Engines are libraries: no engine may import the CLI's packages, so that
// the MCP server and embedders get the same engines without the CLI.
func TestEnginesDoNotImportAdapters(t *testing.T) {
	engines := []string{"grep", "inspect", "read", "review", "patch", "lang", "rows", "workspace", "txn", "proc", "errs", "regfile", "jsonstr", "router", "shell", "lsp", "symbol", "spool", "agent"}
	for _, e := range engines {
		pkg := "github.com/rowkit/rowkit/internal/" + e
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			switch dep {
			case "github.com/rowkit/rowkit/internal/cli", "github.com/rowkit/rowkit/internal/cmd", "github.com/rowkit/rowkit/internal/mcpserver":
				t.Errorf("%s imports %s", pkg, dep)
			}
		}
	}
}

// processGlobal are the calls and variables that read or change the state of
// the whole process. Only main may use them: a command gets its working
// directory, environment and streams in cli.Env and its cancellation in
// ctx, so that a shell can run several commands at once in one process,
// each in its own directory. Keyed by import path, then name.
var processGlobal = map[string][]string{
	"os":            {"Getwd", "Chdir", "Getenv", "LookupEnv", "Environ", "Setenv", "Unsetenv", "Clearenv", "ExpandEnv", "Exit", "Stdin", "Stdout", "Stderr"},
	"os/signal":     {"Notify", "NotifyContext", "Ignore", "Reset", "Stop"},
	"runtime/debug": {"SetGCPercent", "SetMemoryLimit", "SetMaxThreads", "SetMaxStack"},
	"runtime":       {"GOMAXPROCS"}, // LockOSThread binds one goroutine only (proc forks from a locked thread for Pdeathsig)
	"github.com/rowkit/rowkit/internal/workspace": {"Cwd"},
}

// Below main nothing touches process-global state (issue 19): checked on
// the syntax of every non-test file of every package under internal/, by
// the import each name is selected from, so an alias cannot hide one.
func TestNoProcessGlobalsBelowMain(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("../../internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil // a program of its own (a generator), not a package of rowkit's
		}
		if strings.HasSuffix(f.Name.Name, "test") {
			// A test harness, as net/http/httptest is: it starts real
			// clients in real directories and is never linked into the
			// binary (TestHarnessesAreNotLinked).
			return nil
		}
		imported := map[string]string{} // local name -> import path
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			imported[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if slices.Contains(processGlobal[imported[x.Name]], sel.Sel.Name) {
				t.Errorf("%s: %s.%s: process-global state belongs to main (cmd/rowkit); take it from cli.Env or ctx", fset.Position(sel.Pos()), imported[x.Name], sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Test harnesses (packages named like httptest) may read the process's
// state because they drive whole programs; the binary must not link them.
func TestHarnessesAreNotLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/rowkit/rowkit/cmd/rowkit").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/rowkit/rowkit/") && strings.HasSuffix(dep, "test") {
			t.Errorf("the binary links the test harness %s", dep)
		}
	}
}

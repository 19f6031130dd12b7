package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"
)

// The demo module of the README's "What the tools print", in a git
// repository whose one commit has fixed authors and dates, so that its
// hashes are the README's.
var readmeDemo = map[string]string{
	"go.mod": "module demo\n\ngo 1.26\n",
	"greet.go": `package demo

import "fmt"

// Greet says hello to name.
func Greet(name string) string {
	return fmt.Sprintf("hello, %s", name)
}
`,
	"main_test.go": `package demo

import "testing"

func TestGreet(t *testing.T) {
	if Greet("rowkit") != "hello, rowkit" {
		t.Fatal(Greet("rowkit"))
	}
}
`,
}

// readmeDemoDir is where the README's examples ran; the test puts it in
// place of its own directory.
const readmeDemoDir = "/tmp/rowkit-guide-demo"

// TestReadmeExamples runs every `$ COMMAND` of the README's "What the
// tools print", in order, on the demo module, and requires what it prints
// (stdout and stderr together) to be what the README shows.
func TestReadmeExamples(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := readmeExamples(string(b), "## What the tools print")
	if len(examples) < 8 {
		t.Fatalf("README.md shows %d examples, want one of each tool: %q", len(examples), examples)
	}

	var script strings.Builder
	script.WriteString(`env GIT_AUTHOR_NAME=me GIT_AUTHOR_EMAIL=me@example.com GIT_COMMITTER_NAME=me GIT_COMMITTER_EMAIL=me@example.com
env GIT_AUTHOR_DATE=2026-12-04T00:00:00Z GIT_COMMITTER_DATE=2026-12-04T00:00:00Z
cd demo
exec git init -q -b master
exec git add .
exec git commit -q -m init
`)
	ar := &txtar.Archive{}
	for name, text := range readmeDemo {
		ar.Files = append(ar.Files, txtar.File{Name: "demo/" + name, Data: []byte(text)})
	}
	for i, ex := range examples {
		fmt.Fprintf(&script, "\n# $ %s\nexec bash $WORK/ex%d.sh\ncmp stdout $WORK/ex%d.out\n", strings.SplitN(ex[0], "\n", 2)[0], i, i)
		// Both streams, as a terminal shows them, and the demo's
		// directory as the README names it.
		sh := fmt.Sprintf("{\n%s\n} 2>&1 | sed \"s|$PWD|%s|g\"\n", ex[0], readmeDemoDir)
		ar.Files = append(ar.Files,
			txtar.File{Name: fmt.Sprintf("ex%d.sh", i), Data: []byte(sh)},
			txtar.File{Name: fmt.Sprintf("ex%d.out", i), Data: []byte(ex[1])})
	}
	ar.Comment = []byte(script.String())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "readme_examples.txtar"), txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			// The language servers hsymbol asks, and its brokers
			// ended with the script.
			return symbolSetup(env)
		},
	})
}

// readmeExamples are the commands (`$ ` lines, with a heredoc's lines up
// to its EOF) of the fenced blocks of the section of text that heading
// starts, each with what follows it.
func readmeExamples(text, heading string) [][2]string {
	var out [][2]string
	in, fence := false, false
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case !fence && strings.HasPrefix(line, "## "):
			in = line == heading
		case !in:
		case strings.HasPrefix(line, "```") && !fence:
			fence, lines = true, nil
		case strings.HasPrefix(line, "```"):
			fence = false
			for i := 0; i < len(lines); {
				if !strings.HasPrefix(lines[i], "$ ") {
					i++
					continue
				}
				cmd := []string{strings.TrimPrefix(lines[i], "$ ")}
				i++
				if strings.Contains(cmd[0], "<<'EOF'") {
					for i < len(lines) {
						cmd = append(cmd, lines[i])
						i++
						if cmd[len(cmd)-1] == "EOF" {
							break
						}
					}
				}
				var shown []string
				for i < len(lines) && !strings.HasPrefix(lines[i], "$ ") {
					shown = append(shown, lines[i])
					i++
				}
				out = append(out, [2]string{strings.Join(cmd, "\n"), strings.Join(shown, "\n") + "\n"})
			}
		case fence:
			lines = append(lines, line)
		}
	}
	return out
}

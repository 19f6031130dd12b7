package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
)

func TestExitCodeAndDiagnostic(t *testing.T) {
	tests := []struct {
		err    error
		exit   int
		stderr string
	}{
		{nil, 0, ""},
		{errs.Usagef("missing PATH"), 2, "x: usage: missing PATH\n"},
		{errs.Errorf("not_found", "a.txt: no such file"), 1, "x: not_found: a.txt: no such file\n"},
		{fmt.Errorf("wrapped: %w", errs.Errorf("read", "boom")), 1, "x: wrapped: read: boom\n"},
		{errs.IncompleteTokens(15000), 1, "x: output incomplete: 15,000-token limit reached\n"},
		{errors.New("two\nlines"), 1, "x: two lines\n"},
		// A name in a message never reaches the terminal raw: no escape
		// sequence, no carriage return, no C1 control.
		{errs.Errorf("not_found", "a\x1b[31mb\rc\x00d\x7fe\u009bf\tg: no such file"), 1, "x: not_found: a\\x1b[31mb\\rc\\x00d\\x7fe\\u009bf\tg: no such file\n"},
		{errs.New("E_GIT_FAILED", "git failed").WithExit(3), 3, "x: git_failed: git failed\n"},
		// The next step on a line of its own, as age's hint: line; one
		// wrapped in another message stays in that message's line.
		{errs.New("server_missing", "gopls is not installed").WithHint("install it with: go install golang.org/x/tools/gopls@v0.23.0"), 1,
			"x: server_missing: gopls is not installed\nx: hint: install it with: go install golang.org/x/tools/gopls@v0.23.0\n"},
		{fmt.Errorf("while x: %w", errs.New("changed", "a.go changed").WithHint("run it again")), 1, "x: while x: changed: a.go changed (run it again)\n"},
		{errs.New("read", "boom").WithHint("a\x1bb"), 1, "x: read: boom\nx: hint: a\\x1bb\n"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		c := &Command{Name: "x", Run: func(context.Context, *Env, []string) error { return tt.err }}
		code := c.Exec(context.Background(), &Env{Stdout: &stdout, Stderr: &stderr}, "x", nil)
		if code != tt.exit || stderr.String() != tt.stderr || stdout.Len() != 0 {
			t.Errorf("%v: exit %d stderr %q, want %d %q", tt.err, code, stderr.String(), tt.exit, tt.stderr)
		}
	}
}

func TestMainDispatch(t *testing.T) {
	var got []string
	c := &Command{Name: "echo", Aliases: []string{"hecho"}, Usage: "echo ARGS", Summary: "echo",
		Run: func(_ context.Context, env *Env, args []string) error {
			got = args
			return nil
		}}
	cmds := []*Command{c}
	tests := []struct {
		argv []string
		exit int
		args []string
	}{
		{[]string{"/usr/local/bin/hecho", "a", "b"}, 0, []string{"a", "b"}},
		{[]string{"rowkit", "echo", "c"}, 0, []string{"c"}},
		{[]string{"rowkit", "hecho"}, 2, nil}, // an alias is not a subcommand
		{[]string{"rowkit", "-x"}, 2, nil},
		{[]string{"rowkit"}, 2, nil},
		{[]string{"rowkit", "help", "hecho"}, 0, nil},
		{[]string{"rowkit", "help", "a", "b"}, 2, nil},
	}
	for _, tt := range tests {
		got = nil
		var out, errb bytes.Buffer
		exit := Main(context.Background(), &Env{Stdout: &out, Stderr: &errb}, tt.argv, cmds)
		if exit != tt.exit || fmt.Sprint(got) != fmt.Sprint(tt.args) {
			t.Errorf("%q: exit %d args %q, want %d %q (stderr %q)", tt.argv, exit, got, tt.exit, tt.args, errb.String())
		}
	}
}

type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// Help and the version are output like any other: when stdout cannot take
// them the exit is 1 with a write diagnostic (it was 0, the text lost).
func TestHelpWriteFails(t *testing.T) {
	cmds := []*Command{{Name: "echo", Usage: "echo ARGS", Summary: "echo", Help: "more", Run: func(context.Context, *Env, []string) error { return nil }}}
	for _, argv := range [][]string{{"rowkit", "help"}, {"rowkit", "help", "echo"}, {"rowkit", "--help"}, {"rowkit", "--version"}} {
		var errb bytes.Buffer
		exit := Main(context.Background(), &Env{Stdout: fullWriter{}, Stderr: &errb}, argv, cmds)
		if exit != 1 || !strings.HasSuffix(errb.String(), ": write: writing output: no space left on device\n") {
			t.Errorf("%q: exit %d stderr %q", argv, exit, errb.String())
		}
	}
}

// link reports a listing it could not write, after linking every name.
func TestLinkWriteFails(t *testing.T) {
	dir := t.TempDir()
	cmds := []*Command{{Name: "echo", Aliases: []string{"hecho"}, Run: func(context.Context, *Env, []string) error { return nil }}}
	var errb bytes.Buffer
	exit := Main(context.Background(), &Env{Stdout: fullWriter{}, Stderr: &errb}, []string{"rowkit", "link", dir}, cmds)
	if exit != 1 || !strings.Contains(errb.String(), "rowkit link: write: the names are linked, but writing the list failed") {
		t.Errorf("exit %d stderr %q", exit, errb.String())
	}
	if _, err := os.Readlink(filepath.Join(dir, "hecho")); err != nil {
		t.Errorf("hecho was not linked: %v", err)
	}
}

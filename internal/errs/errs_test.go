package errs

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{io.EOF, 1},
		{New(NotFound, "x: no such file"), 1},
		{Usagef("missing PATH"), 2},
		{fmt.Errorf("wrapped: %w", Usagef("bad")), 2},
		{New("E_GIT_FAILED", "git failed").WithExit(3), 3},
		{New(Usage, "odd").WithExit(70), 70},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestErrorLine(t *testing.T) {
	e := Errorf(NotUTF8, "a.txt is not valid UTF-8:\ninvalid byte at offset %d", 7).WithHint("convert it")
	if got, want := e.Error(), "not_utf8: a.txt is not valid UTF-8: invalid byte at offset 7 (convert it)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	// New takes its message literally, % signs included.
	if got := New(Read, "100% done").Msg; got != "100% done" {
		t.Errorf("Msg = %q", got)
	}
	wrapped := fmt.Errorf("ctx: %w", e)
	if Code(wrapped) != NotUTF8 || !Is(wrapped, NotUTF8) || Is(wrapped, Read) || Code(errors.New("x")) != "" {
		t.Errorf("Code/Is do not see through wrapping")
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"a b/c.txt":   "a b/c.txt",
		"café.go":     "café.go",
		"x\x1b[2J":    `"x\x1b[2J"`,
		"bad\xffname": `"bad\xffname"`,
		"tab\tname":   `"tab\tname"`,
		"nl\nname":    `"nl\nname"`,
	} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %s, want %s", in, got, want)
		}
	}
}

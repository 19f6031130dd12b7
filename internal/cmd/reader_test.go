package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// stderrCode is the code of a command's "NAME: CODE: MESSAGE" line, "" when
// stderr has none.
func stderrCode(name string, stderr []byte) string {
	line, _, _ := bytes.Cut(stderr, []byte("\n"))
	rest, ok := bytes.CutPrefix(line, []byte(name+": "))
	if !ok {
		return ""
	}
	code, _, _ := bytes.Cut(rest, []byte(": "))
	return string(code)
}

// hread and rowkit read are two printers of one reader: the same input
// gets the same code and exit status from both. (Permission denied needs a
// user other than root: the scripts hread_errors and read_errors check it
// with the commands denied and readdenied.)
func TestReaderFacesAgree(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok.txt", "alpha\nbeta\n")
	write("nul.txt", "alpha\nbe\x00ta\n")
	write("doc.pdf", "%PDF-1.4\n1 0 obj\n")
	write("a.zip", "PK\x03\x04\x14\x00")
	write("latin1.txt", "caf\xe9\n")
	write("late.txt", strings.Repeat("ok\n", 5000)+"caf\xe9\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self", filepath.Join(dir, "proc")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		hread []string // hread's arguments
		read  []string // rowkit read's
		code  string
		exit  int
	}{
		{"missing file", []string{"missing.txt"}, []string{"missing.txt"}, "not_found", 1},
		{"parent not a directory", []string{"ok.txt/x"}, []string{"ok.txt/x"}, "not_found", 1},
		{"FIFO", []string{"fifo"}, []string{"fifo"}, "not_regular", 1},
		{"a device", []string{"/dev/null"}, []string{"/dev/null"}, "dangerous_path", 1},
		{"/proc", []string{"/proc/self/status"}, []string{"/proc/self/status"}, "dangerous_path", 1},
		{"NUL byte", []string{"nul.txt"}, []string{"nul.txt"}, "binary", 3},
		{"PDF", []string{"doc.pdf"}, []string{"doc.pdf"}, "pdf", 3},
		{"zip", []string{"a.zip"}, []string{"a.zip"}, "binary", 3},
		{"invalid UTF-8", []string{"latin1.txt"}, []string{"latin1.txt"}, "not_utf8", 3},
		{"invalid UTF-8 after the sample", []string{"late.txt", "1:2"}, []string{"late.txt", "--limit", "2"}, "not_utf8", 3},
		{"malformed range", []string{"ok.txt", "0:1"}, []string{"ok.txt", "--offset", "0"}, "invalid_input", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := callEnv(dir, nil, "", append([]string{"hread"}, c.hread...)...)
			r := callEnv(dir, nil, "", append([]string{"rowkit", "read"}, c.read...)...)
			if got := stderrCode("hread", h.Stderr); got != c.code || h.Code != c.exit || len(h.Stdout) != 0 {
				t.Errorf("hread %v: %s (exit %d, stdout %q), want %s (exit %d, stdout empty)", c.hread, h.Stderr, h.Code, h.Stdout, c.code, c.exit)
			}
			if got := stderrCode("rowkit read", r.Stderr); got != c.code || r.Code != c.exit {
				t.Errorf("rowkit read %v: %s (exit %d), want %s (exit %d)", c.read, r.Stderr, r.Code, c.code, c.exit)
			}
		})
	}

	// The differences that remain are defaults of a face, documented in
	// docs/hread.md ("hread and read"): a directory is read's to list, a
	// path out of the root hread's to open as cat would, a START past the
	// end an error in hread and a note in read, an image media in read.
	write("img.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	outside := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(outside, []byte("out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name        string
		hread, read []string
		hreadCode   string
		hreadExit   int
		hreadOut    string // the start of hread's stdout
		readCode    string
		readExit    int
	}{
		{"directory", []string{"sub"}, []string{"sub"}, "not_regular", 1, "", "", 0},
		{"symlink out of the root", []string{"link.txt"}, []string{"link.txt"}, "", 0, "1:", "outside_workspace", 1},
		{"START past the end", []string{"ok.txt", "5:5"}, []string{"ok.txt", "--offset", "5"}, "past_eof", 1, "", "", 0},
		{"PNG", []string{"img.png"}, []string{"img.png"}, "image", 3, "", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := callEnv(dir, nil, "", append([]string{"hread"}, c.hread...)...)
			r := callEnv(dir, nil, "", append([]string{"rowkit", "read"}, c.read...)...)
			if got := stderrCode("hread", h.Stderr); got != c.hreadCode || h.Code != c.hreadExit || !bytes.HasPrefix(h.Stdout, []byte(c.hreadOut)) {
				t.Errorf("hread %v: %s (exit %d, stdout %q), want %q (exit %d)", c.hread, h.Stderr, h.Code, h.Stdout, c.hreadCode, c.hreadExit)
			}
			if got := stderrCode("rowkit read", r.Stderr); got != c.readCode || r.Code != c.readExit {
				t.Errorf("rowkit read %v: %s (exit %d), want %q (exit %d)", c.read, r.Stderr, r.Code, c.readCode, c.readExit)
			}
		})
	}

	// -a/--text prints what the classifiers refuse, when it is UTF-8.
	h := callEnv(dir, nil, "", "hread", "--text", "nul.txt")
	if h.Code != 0 || string(h.Stdout) != "1:8ed3 alpha\n2:6dce be\x00ta\n" {
		t.Errorf("hread --text nul.txt: exit %d, %q, %s", h.Code, h.Stdout, h.Stderr)
	}
}

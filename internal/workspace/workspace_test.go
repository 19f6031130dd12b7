package workspace

import (
	"errors"
	"github.com/rowkit/rowkit/internal/errs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func code(err error) string {
	var e *errs.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return "?" + err.Error()
	}
	return ""
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setup makes /tmp/X/srv/root (the workspace) next to /tmp/X/srv/root-evil
// and /tmp/X/outside.
func setup(t *testing.T) (base string, ws *Root) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "srv", "root")
	write(t, filepath.Join(root, "src", "a.go"), "package a\n")
	write(t, filepath.Join(root, "top.txt"), "top\n")
	write(t, filepath.Join(base, "srv", "root-evil", "secret.go"), "package secret\n")
	write(t, filepath.Join(base, "outside.go"), "package out\n")
	ws, err = Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return base, ws
}

func TestClean(t *testing.T) {
	for req, want := range map[string]string{
		"a.go": "a.go", "./a.go": "a.go", "src//a.go": "src/a.go", "src/../a.go": "a.go",
		"src/./x/../a.go": "src/a.go", ".": ".", "src/": "src", "-dash": "-dash", "a b/c d": "a b/c d",
	} {
		got, err := Clean(req)
		if err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", req, got, err, want)
		}
	}
	for req, wantCode := range map[string]string{
		"/etc/passwd": CodeOutside, "..": CodeOutside, "../x": CodeOutside, "a/../../x": CodeOutside,
		"src/../../root/a.go": CodeOutside, "@shell/x": CodeOutside, "@shell": CodeOutside,
		"": CodeNotFound, "a\x00b": CodeNotFound,
	} {
		if _, err := Clean(req); code(err) != wantCode {
			t.Errorf("Clean(%q): %v, want %s", req, err, wantCode)
		}
	}
}

func TestInsideComparesComponents(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		want   bool
	}{
		{"/srv/root", "/srv/root", true},
		{"/srv/root", "/srv/root/a", true},
		{"/srv/root", "/srv/root-evil", false},
		{"/srv/root", "/srv/root-evil/a", false},
		{"/srv/root", "/srv/rootx", false},
		{"/srv/root", "/srv", false},
		{"/", "/anything", true},
	} {
		if got := Inside(c.dir, c.p); got != c.want {
			t.Errorf("Inside(%q, %q) = %v", c.dir, c.p, got)
		}
	}
}

func TestSymlinks(t *testing.T) {
	base, ws := setup(t)
	root := ws.Dir()
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("src/a.go", "rel.go")                                  // relative, inside
	link(filepath.Join(root, "src", "a.go"), "abs.go")          // absolute, inside
	link("src", "srclink")                                      // directory, inside
	link("../root-evil/secret.go", "evil.go")                   // prefix sibling (CVE-2025-53110)
	link(filepath.Join(base, "outside.go"), "out.go")           // absolute escape (CVE-2025-53109)
	link("../../outside.go", "up.go")                           // relative escape
	link("../root-evil", "evildir")                             // directory escape
	link(filepath.Join(base, "does-not-exist.go"), "dangle.go") // dangling, outside
	link("src/missing.go", "dangle-in.go")                      // dangling, inside
	link("../root/src/a.go", "roundtrip.go")                    // leaves and comes back
	link("loop1", "loop2")
	link("loop2", "loop1")
	link("top.txt/x", "notdir.go")

	for req, want := range map[string]string{
		"rel.go": "", "abs.go": "", "srclink/a.go": "", "roundtrip.go": "",
		"evil.go": CodeOutside, "out.go": CodeOutside, "up.go": CodeOutside,
		"evildir/secret.go": CodeOutside, "dangle.go": CodeOutside,
		"dangle-in.go": CodeNotFound, "loop1": CodeNotFound, "notdir.go": CodeNotFound,
		"missing.go": CodeNotFound, "top.txt/x.go": CodeNotFound,
		"src": CodeNotRegular, ".": CodeNotRegular,
	} {
		_, data, err := ws.ReadFile(req)
		if code(err) != want {
			t.Errorf("ReadFile(%q): %v, want %q", req, err, want)
		}
		if want == "" && string(data) != "package a\n" {
			t.Errorf("ReadFile(%q) = %q", req, data)
		}
		if _, _, err := ws.Stat(req); code(err) != want {
			t.Errorf("Stat(%q): %v, want %q", req, err, want)
		}
	}
}

// The workspace root may itself be reached through a symlink: it is
// canonicalised, so its own files are inside.
func TestRootThroughSymlink(t *testing.T) {
	base, ws := setup(t)
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(ws.Dir(), alias); err != nil {
		t.Fatal(err)
	}
	ws2, err := Open(alias)
	if err != nil {
		t.Fatal(err)
	}
	if ws2.Dir() != ws.Dir() {
		t.Errorf("Dir = %q, want %q", ws2.Dir(), ws.Dir())
	}
	if err := os.Symlink(filepath.Join(alias, "top.txt"), filepath.Join(ws.Dir(), "via-alias")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws2.ReadFile("via-alias"); err != nil {
		t.Errorf("a link through the root's alias is inside: %v", err)
	}
}

// A FIFO is refused at once, by stat, without blocking, even when a writer
// never comes.
func TestSpecialFilesDoNotBlock(t *testing.T) {
	_, ws := setup(t)
	fifo := filepath.Join(ws.Dir(), "pipe.go")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(ws.Dir(), "zero.go")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := ws.ReadFile("pipe.go")
		done <- err
	}()
	select {
	case err := <-done:
		if code(err) != CodeNotRegular {
			t.Errorf("FIFO: %v, want not_regular", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
	// /dev/zero is outside; a device inside would be not_regular.
	if _, _, err := ws.ReadFile("zero.go"); code(err) != CodeOutside {
		t.Errorf("/dev/zero: %v, want outside_workspace", err)
	}
}

// A path that is checked while inside and then swapped for a symlink to
// the outside cannot be opened through the root.
func TestSwappedSymlinkCannotRedirect(t *testing.T) {
	base, ws := setup(t)
	_, target, err := ws.Resolve("src/a.go")
	if err != nil {
		t.Fatal(err)
	}
	// The check passed; now an attacker swaps the directory for a link.
	src := filepath.Join(ws.Dir(), "src")
	if err := os.RemoveAll(src); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(base, "evil", "a.go"), "package evil\n")
	if err := os.Symlink(filepath.Join(base, "evil"), src); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(ws.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if f, err := root.Open(target); err == nil {
		f.Close()
		t.Fatal("the swapped symlink redirected the open outside the root")
	}
	if _, _, err := ws.ReadFile("src/a.go"); code(err) != CodeOutside {
		t.Errorf("after the swap: %v, want outside_workspace", err)
	}
}

// A device node inside the workspace is refused by stat, before any open
// (opening some devices has effects of its own).
func TestDeviceInsideRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a device node needs root")
	}
	_, ws := setup(t)
	dev := filepath.Join(ws.Dir(), "null.go")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil { // same device as /dev/null
		t.Fatal(err)
	}
	for _, f := range []func(string) error{
		func(p string) error { _, _, err := ws.ReadFile(p); return err },
		func(p string) error { _, _, err := ws.Stat(p); return err },
	} {
		if err := f("null.go"); code(err) != CodeNotRegular {
			t.Errorf("device: %v, want not_regular", err)
		}
	}
}

// Open gives files and directories, refuses special files without blocking,
// and confines like ReadFile.
func TestOpen(t *testing.T) {
	_, ws := setup(t)
	if err := syscall.Mkfifo(filepath.Join(ws.Dir(), "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../root-evil/secret.go", filepath.Join(ws.Dir(), "evil.go")); err != nil {
		t.Fatal(err)
	}
	clean, f, fi, err := ws.Open("./src//a.go")
	if err != nil || clean != "src/a.go" || !fi.Mode().IsRegular() {
		t.Fatalf("file: %q %v %v", clean, fi, err)
	}
	f.Close()
	_, f, fi, err = ws.Open("src")
	if err != nil || !fi.IsDir() {
		t.Fatalf("dir: %v %v", fi, err)
	}
	if names, err := f.Readdirnames(-1); err != nil || len(names) != 1 || names[0] != "a.go" {
		t.Fatalf("dir entries %q, %v", names, err)
	}
	f.Close()
	done := make(chan error, 1)
	go func() { _, _, _, err := ws.Open("pipe"); done <- err }()
	select {
	case err := <-done:
		if code(err) != CodeNotRegular {
			t.Errorf("FIFO: %v, want not_regular", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("opening a FIFO blocked")
	}
	for req, want := range map[string]string{"evil.go": CodeOutside, "missing": CodeNotFound, "/etc/passwd": CodeOutside} {
		if _, _, _, err := ws.Open(req); code(err) != want {
			t.Errorf("%s: %v, want %s", req, err, want)
		}
	}
	if os.Geteuid() != 0 {
		write(t, filepath.Join(ws.Dir(), "secret"), "x")
		os.Chmod(filepath.Join(ws.Dir(), "secret"), 0)
		if _, _, _, err := ws.Open("secret"); code(err) != errs.PermissionDenied {
			t.Errorf("mode 000: %v, want permission_denied", err)
		}
	}
}

// A root replaced by a symlink after Open: lookups keep going through the
// directory that was opened, and Check says the path no longer names it.
func TestRootHeldOpen(t *testing.T) {
	parent := t.TempDir()
	dir, other := filepath.Join(parent, "root"), filepath.Join(parent, "other")
	for d, text := range map[string]string{dir: "held\n", other: "other\n"} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "sub", "f.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(); err != nil {
		t.Fatalf("before the swap: %v", err)
	}
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, dir); err != nil {
		t.Fatal(err)
	}
	if _, data, err := r.ReadFile("sub/f.txt"); err != nil || string(data) != "held\n" {
		t.Errorf("ReadFile: %q %v", data, err)
	}
	if fi, err := os.Stat(filepath.Join(r.ProcDir(), "sub", "f.txt")); err != nil || fi.Size() != 5 {
		t.Errorf("ProcDir: %v %v", fi, err)
	}
	if _, _, err := r.Free("sub/new.txt"); err != nil {
		t.Errorf("Free: %v", err)
	}
	if err := r.Check(); errs.Code(err) != CodeOutside {
		t.Errorf("Check after the swap: %v", err)
	}
}

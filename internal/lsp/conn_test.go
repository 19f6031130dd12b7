package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadMessage(t *testing.T) {
	for _, tc := range []struct {
		in, body, err string
	}{
		{"Content-Length: 2\r\n\r\n{}", "{}", ""},
		{"content-length:2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n[]", "[]", ""},
		{"Content-Length: 5\n\nhello", "hello", ""}, // LF alone, as some servers write
		{"", "", "EOF"},
		{"Content-Length: 10\r\n\r\nshort", "", "unexpected EOF"},
		{"Content-Type: x\r\n\r\n{}", "", "no Content-Length"},
		{"Content-Length: -1\r\n\r\n", "", "bad Content-Length"},
		{"Content-Length: 999999999999999999999\r\n\r\n", "", "bad Content-Length"},
		{"Content-Length: 300000000\r\n\r\n", "", "over the"},
		{"garbage\r\n\r\n", "", "no colon"},
		{"Content-Length: 2\r\n", "", "unexpected EOF"},
	} {
		body, err := ReadMessage(bufio.NewReader(strings.NewReader(tc.in)))
		switch {
		case tc.err == "" && (err != nil || string(body) != tc.body):
			t.Errorf("%q: got %q, %v", tc.in, body, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: got error %v, want %q", tc.in, err, tc.err)
		}
	}
}

func FuzzReadMessage(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 3\r\nX: y\r\n\r\nabc"))
	f.Fuzz(func(t *testing.T, b []byte) {
		body, err := ReadMessage(bufio.NewReader(strings.NewReader(string(b))))
		if err == nil && len(body) > len(b) {
			t.Fatalf("a body of %d bytes from %d bytes of input", len(body), len(b))
		}
	})
}

// echoHandler answers nothing; the tests drive both ends.
type nopHandler struct{}

func (nopHandler) Request(method string, params json.RawMessage) (any, error) {
	return nil, &ResponseError{Code: CodeMethodNotFound, Message: method}
}
func (nopHandler) Notify(string, json.RawMessage) {}

// TestConnCall runs a call against a peer on the other end of two pipes
// that answers out of order, and one that ends.
func TestConnCall(t *testing.T) {
	toPeer, fromUs := io.Pipe()
	toUs, fromPeer := io.Pipe()
	c := NewConn(toUs, fromUs, nopHandler{}, nil)
	go func() {
		r := bufio.NewReader(toPeer)
		var reqs []message
		for len(reqs) < 2 {
			body, err := ReadMessage(r)
			if err != nil {
				return
			}
			var m message
			json.Unmarshal(body, &m)
			reqs = append(reqs, m)
		}
		// Answer the second first, then the first with an error.
		for _, m := range []message{{JSONRPC: "2.0", ID: reqs[1].ID, Result: json.RawMessage(`"two"`)},
			{JSONRPC: "2.0", ID: reqs[0].ID, Error: &ResponseError{Code: -32000, Message: "no"}}} {
			b, _ := json.Marshal(m)
			io.WriteString(fromPeer, "Content-Length: "+itoa(len(b))+"\r\n\r\n"+string(b))
		}
		fromPeer.Close()
	}()
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "first", nil, nil) }()
	time.Sleep(50 * time.Millisecond)
	var got string
	if err := c.Call(context.Background(), "second", map[string]int{"a": 1}, &got); err != nil || got != "two" {
		t.Fatalf("second: %q, %v", got, err)
	}
	var re *ResponseError
	if err := <-errc; !errors.As(err, &re) || re.Message != "no" {
		t.Fatalf("first: %v", err)
	}
	<-c.Done()
	if err := c.Call(context.Background(), "third", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("a call after the end: %v", err)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestDecodeLocations(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`null`, `[]`},
		{`{"uri":"file:///a","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}`, `[{"uri":"file:///a","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}]`},
		{`[{"targetUri":"file:///b","targetRange":{"start":{"line":0,"character":0},"end":{"line":9,"character":1}},"targetSelectionRange":{"start":{"line":3,"character":4},"end":{"line":3,"character":5}}}]`, `[{"uri":"file:///b","range":{"start":{"line":3,"character":4},"end":{"line":3,"character":5}}}]`},
	} {
		locs, err := DecodeLocations(json.RawMessage(tc.in))
		if locs == nil {
			locs = []Location{}
		}
		b, _ := json.Marshal(locs)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: %s, %v", tc.in, b, err)
		}
	}
}

func TestURI(t *testing.T) {
	for _, p := range []string{"/a/b.go", "/with space/é/#x?.py", "/%20literal"} {
		if got := Path(URI(p)); got != p {
			t.Errorf("%s -> %s -> %s", p, URI(p), got)
		}
	}
	if Path("untitled:Untitled-1") != "" {
		t.Error("a URI that is not a file's has no path")
	}
}

func TestCoalesce(t *testing.T) {
	ch := []Change{
		{Path: "/r/a", Type: FileCreated}, {Path: "/r/a", Type: FileChanged}, // created
		{Path: "/r/tmp", Type: FileCreated}, {Path: "/r/tmp", Type: FileDeleted}, // nothing
		{Path: "/r/b", Type: FileDeleted}, {Path: "/r/b", Type: FileCreated}, // changed
		{Path: "/r/c", Type: FileChanged}, {Path: "/r/c", Type: FileChanged}, // changed
	}
	got := Coalesce(ch)
	want := []FileEvent{{URI("/r/a"), FileCreated}, {URI("/r/b"), FileChanged}, {URI("/r/c"), FileChanged}}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %v, want %v", i, got[i], want[i])
		}
	}
}

// TestWatcher checks that every way an editor or hpatch changes a file is
// seen once Sync returns, that a new directory is watched with the files
// already in it, that skipped directories are not, and that the root's
// removal is noticed.
func TestWatcher(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.MkdirAll(filepath.Join(root, "node_modules", "x"), 0o755)
	os.WriteFile(filepath.Join(root, "sub", "a.go"), []byte("package a\n"), 0o644)
	w, err := Watch(root, func(name string) bool { return name == "node_modules" })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !w.Exts()[".go"] {
		t.Errorf("extensions: %v", w.Exts())
	}
	start := w.Seq()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "sub", "a.go"), []byte("package a // x\n"), 0o644))
	// hpatch's way: a temporary file beside the target, renamed over it.
	must(os.WriteFile(filepath.Join(root, "sub", ".a.go.tmp"), []byte("package a\n"), 0o644))
	must(os.Rename(filepath.Join(root, "sub", ".a.go.tmp"), filepath.Join(root, "sub", "b.go")))
	must(os.MkdirAll(filepath.Join(root, "new", "deep"), 0o755))
	must(os.WriteFile(filepath.Join(root, "new", "deep", "c.py"), []byte("x = 1\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "node_modules", "x", "i.js"), nil, 0o644))
	must(os.Remove(filepath.Join(root, "sub", "a.go")))
	w.Sync()
	changes, _, ok := w.Since(start)
	if !ok {
		t.Fatal("lost track")
	}
	got := map[string]bool{}
	for _, ev := range Coalesce(changes) {
		got[strings.TrimPrefix(Path(ev.URI), root+"/")+" "+itoa(ev.Type)] = true
	}
	for _, want := range []string{"sub/a.go 3", "sub/b.go 1", "new 1", "new/deep/c.py 1"} {
		if !got[want] {
			t.Errorf("missing %s in %v", want, got)
		}
	}
	for k := range got {
		if strings.Contains(k, "node_modules") || strings.Contains(k, ".tmp") {
			t.Errorf("%s should not be reported", k)
		}
	}
	if !w.Exts()[".py"] {
		t.Errorf("a new file's extension is not noted: %v", w.Exts())
	}
	must(os.RemoveAll(root))
	deadline := time.Now().Add(5 * time.Second)
	for !w.Gone() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !w.Gone() {
		t.Error("the root's removal was not noticed")
	}
}

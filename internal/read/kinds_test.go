package read

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

func pngBytes(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zipBytes(t *testing.T, names ...string) []byte {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, n := range names {
		f, err := w.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("<x/>"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const notebookJSON = `{
 "cells": [
  {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "Some text"]},
  {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": "print(1)\nx",
   "outputs": [
    {"output_type": "stream", "name": "stdout", "text": ["1\n"]},
    {"output_type": "execute_result", "data": {"text/plain": ["2"]}, "metadata": {}},
    {"output_type": "display_data", "data": {"image/png": "iVBOR"}, "metadata": {}},
    {"output_type": "error", "ename": "NameError", "evalue": "name 'y' is not defined", "traceback": ["\u001b[31m..."]}
   ]}
 ],
 "metadata": {}, "nbformat": 4, "nbformat_minor": 5
}
`

func TestKindsGolden(t *testing.T) {
	root, dir := ws(t, map[string]string{
		"doc.pdf":       "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n",
		"nul.bin":       "text\x00more",
		"latin1.txt":    "caf\xe9\n",
		"nb.ipynb":      notebookJSON,
		"broken.ipynb":  `{"cells": [`,
		"d/b.txt":       "b",
		"d/a/x":         "x",
		"d/Z":           "z",
		"d/line\nbreak": "n",
		"big/f1":        "", "big/f2": "", "big/f3": "", "big/f4": "", "big/f5": "",
	})
	writeFile(t, filepath.Join(dir, "pic.png"), string(pngBytes(t)))
	writeFile(t, filepath.Join(dir, "arch.zip"), string(zipBytes(t, "a.txt")))
	writeFile(t, filepath.Join(dir, "report.docx"), string(zipBytes(t, "[Content_Types].xml", "word/document.xml")))
	if err := os.Mkdir(filepath.Join(dir, "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"d", "big", "emptydir"} {
		os.Chtimes(filepath.Join(dir, d), fixedMtime, fixedMtime)
	}
	cases := []struct {
		name, path string
		opts       Options
		status     Status
		code       string
	}{
		{"png", "pic.png", Options{}, StatusMedia, ""},
		{"png-too-large", "pic.png", Options{Limits: Limits{MaxMediaBytes: 10}}, StatusUnsupported, UnsupportedTooLarge},
		{"pdf", "doc.pdf", Options{}, StatusUnsupported, UnsupportedPDF},
		{"zip", "arch.zip", Options{}, StatusUnsupported, UnsupportedBinary},
		{"docx", "report.docx", Options{}, StatusUnsupported, UnsupportedOffice},
		{"nul", "nul.bin", Options{}, StatusUnsupported, UnsupportedBinary},
		{"latin1", "latin1.txt", Options{}, StatusUnsupported, UnsupportedUnknownEncoding},
		{"notebook", "nb.ipynb", Options{}, StatusOK, ""},
		{"notebook-invalid", "broken.ipynb", Options{}, StatusUnsupported, UnsupportedInvalidNotebook},
		{"notebook-too-large", "nb.ipynb", Options{Limits: Limits{MaxConvertBytes: 100}}, StatusUnsupported, UnsupportedTooLarge},
		{"directory", "d", Options{}, StatusOK, ""},
		{"directory-truncated", "big", Options{Limits: Limits{MaxDirectoryEntries: 3}}, StatusOK, ""},
		{"directory-empty", "emptydir", Options{}, StatusOK, ""},
		{"directory-refused", "d", Options{NoDirectories: true}, StatusError, CodeNotAFile},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, _ := read(t, root, Input{Path: c.path}, c.opts)
			code := res.Code
			if res.Error != nil {
				code = res.Error.Code
			}
			if res.Status != c.status || code != c.code {
				t.Fatalf("status %s code %s, want %s %s", res.Status, code, c.status, c.code)
			}
			golden(t, c.name, res)
		})
	}
	// The media part is the file, byte for byte.
	res, _ := read(t, root, Input{Path: "pic.png"}, Options{})
	if data, _ := base64.StdEncoding.DecodeString(res.Parts[0].Data); !bytes.Equal(data, pngBytes(t)) || res.Parts[0].MediaType != "image/png" || res.Observation.WholeFileVisible {
		t.Error("the PNG part is not the file")
	}
	// The notebook's lines are its cells, and paging works on them.
	res, _ = read(t, root, in("nb.ipynb", 4, 2), Options{})
	if len(res.View.Lines) != 2 || res.View.Lines[0].Text != "[cell 2: code]" || res.View.Lines[0].Hash != "" || !res.Continuation.Available {
		t.Errorf("notebook page: %+v", res.View.Lines)
	}
	checkContentID(t, dir, res)
	// A directory listing pages like text.
	lines, _ := follow(t, root, in("big", 0, 2), Options{})
	if len(lines) != 5 || lines[4].Text != "f5" {
		t.Errorf("directory pages: %+v", lines)
	}
}

func TestSpecialFiles(t *testing.T) {
	root, dir := ws(t, map[string]string{"ok.txt": "ok\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan *Result, 1)
	go func() { res, _ := Read(context.Background(), root, Input{Path: "pipe"}, Options{}); done <- res }()
	select {
	case res := <-done:
		if res.Error == nil || res.Error.Code != CodeNotAFile || res.Error.Data.Kind != "fifo" || res.Error.Phase != PhaseOpen {
			t.Fatalf("FIFO: %+v", res.Error)
		}
		golden(t, "fifo", res)
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
	for _, c := range []struct{ root, path string }{{dir, "/dev/zero"}, {dir, "/proc/self/environ"}, {"/", "dev/zero"}, {"/dev", "zero"}, {"/", "sys/kernel"}} {
		r, err := workspace.Open(c.root)
		if err != nil {
			t.Fatal(err)
		}
		res, _ := read(t, r, Input{Path: c.path}, Options{})
		if res.Error == nil || res.Error.Code != CodeDangerousPath || res.File != nil {
			t.Errorf("%s in %s: %+v", c.path, c.root, res.Error)
		}
		if c.path == "/dev/zero" {
			golden(t, "dev-zero", res)
		}
	}
}

// The confinement attacks of design.md section 4.
func TestConfinement(t *testing.T) {
	root, dir := ws(t, map[string]string{"in.txt": "inside\n"})
	base := filepath.Dir(dir)
	writeFile(t, filepath.Join(base, "root-evil", "secret.txt"), "secret\n")
	writeFile(t, filepath.Join(filepath.Dir(base), "outside.txt"), "outside\n")
	for name, target := range map[string]string{
		"escape.txt":  "../root-evil/secret.txt",
		"abs.txt":     filepath.Join(base, "root-evil", "secret.txt"),
		"dangle.txt":  "../nowhere.txt",
		"zero":        "/dev/zero",
		"inside.txt":  "in.txt",
		"updir/x.txt": "../../root-evil/secret.txt",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		"escape.txt":                          CodeOutside,
		"abs.txt":                             CodeOutside,
		"dangle.txt":                          CodeOutside,
		"zero":                                CodeOutside,
		"updir/x.txt":                         CodeOutside,
		"../root-evil/secret.txt":             CodeOutside,
		"../root/in.txt":                      CodeOutside,
		filepath.Join(dir, "in.txt"):          CodeOutside,
		"@shell/in.txt":                       CodeOutside,
		"./in.txt/../../root-evil/secret.txt": CodeOutside,
	} {
		res, _ := read(t, root, Input{Path: path}, Options{})
		if res.Error == nil || res.Error.Code != want || res.File != nil {
			t.Errorf("%s: %+v, want %s", path, res.Error, want)
		}
		if res.Status != StatusError || strings.Contains(string(JSON(res)), "secret") && !strings.Contains(path, "secret") {
			t.Errorf("%s leaks: %s", path, JSON(res))
		}
	}
	res, _ := read(t, root, Input{Path: "escape.txt"}, Options{})
	golden(t, "symlink-out", res)
	res, _ = read(t, root, Input{Path: "../root-evil/secret.txt"}, Options{})
	golden(t, "prefix-sibling", res)
	res, _ = read(t, root, Input{Path: "inside.txt"}, Options{})
	if res.Status != StatusOK || res.File.ResolvedPath != "in.txt" || res.View.Lines[0].Text != "inside" {
		t.Errorf("a symlink inside the root: %+v", res.File)
	}
}

func TestNotFoundSuggestions(t *testing.T) {
	root, _ := ws(t, map[string]string{
		"src/main.go": "", "src/Main_test.go": "", "src/mian.go": "", "src/main.py": "", "src/other.go": "",
		"README.md": "",
	})
	res, _ := read(t, root, Input{Path: "src/main.ts"}, Options{})
	got := strings.Join(res.Error.Data.Suggestions, " ")
	if res.Error.Code != CodeNotFound || res.Error.Phase != PhaseResolve || got != "src/main.go src/main.py" {
		t.Errorf("suggestions %q", got)
	}
	golden(t, "not-found", res)
	res, _ = read(t, root, Input{Path: "scr/main.go"}, Options{})
	if got := strings.Join(res.Error.Data.Suggestions, " "); got != "src" {
		t.Errorf("missing directory: suggestions %q", got)
	}
	res, _ = read(t, root, Input{Path: "readme.MD"}, Options{})
	if got := strings.Join(res.Error.Data.Suggestions, " "); got != "README.md" {
		t.Errorf("case: suggestions %q", got)
	}
	res, _ = read(t, root, Input{Path: "zzzzzz"}, Options{Limits: Limits{MaxSuggestions: 1}})
	if res.Error.Data != nil {
		t.Errorf("nothing near: %+v", res.Error.Data)
	}
}

// A file rewritten between the scan and the verification fails with a
// retry of the same range; so does one that grows.
func TestChangedDuringRead(t *testing.T) {
	root, dir := ws(t, map[string]string{"f.txt": "alpha\nbeta\n", "nb.ipynb": notebookJSON})
	t.Cleanup(func() { testHookBeforeVerify = nil })
	for _, change := range []func(p string){
		func(p string) { os.WriteFile(p, []byte("alpha\nBETA\n"), 0o644) }, // same size, new time
		func(p string) { os.WriteFile(p, []byte("alpha\nbeta\ngamma\n"), 0o644) },
		func(p string) {
			os.Rename(p, p+".old")
			os.WriteFile(p, []byte("alpha\nbeta\n"), 0o644)
			os.Chtimes(p, fixedMtime, fixedMtime)
		},
	} {
		for _, name := range []string{"f.txt", "nb.ipynb"} {
			p := filepath.Join(dir, name)
			data, _ := os.ReadFile(p)
			writeFile(t, p, string(data))
			testHookBeforeVerify = func(path string) {
				if path != p {
					t.Errorf("hook on %s", path)
				}
				change(path)
			}
			res, _ := read(t, root, in(name, 2, 7), Options{})
			testHookBeforeVerify = nil
			if res.Error == nil || res.Error.Code != CodeChanged || res.Error.Phase != PhaseVerification || res.File == nil {
				t.Fatalf("%s: %+v", name, res.Error)
			}
			if r := res.Notes[0].Retry; r == nil || r.Offset != 2 || r.Limit != 7 || r.Path != name {
				t.Errorf("retry %+v", r)
			}
			if name == "f.txt" && res.Error.Message == "f.txt changed while it was read (modification time); read it again" {
				golden(t, "changed", res)
			}
			writeFile(t, p, string(data))
		}
	}
	// Unchanged, the same read is fine.
	if res, err := read(t, root, in("f.txt", 2, 7), Options{}); err != nil || res.Status != StatusOK {
		t.Fatal(err)
	}
}

type denyAll struct{}

func (denyAll) Authorize(_ context.Context, req AuthRequest) Decision {
	if strings.HasSuffix(req.File.DisplayPath, ".env") {
		return Decision{Note: &Note{Code: "secret-file", Severity: "info", Message: "reading .env files is not allowed", Data: &NoteData{Pattern: "*.env"}}}
	}
	return Decision{Allow: true, Note: &Note{Code: "audited", Severity: "info", Message: "this read was logged"}}
}

func TestAuthorizerAndPermission(t *testing.T) {
	root, dir := ws(t, map[string]string{"prod.env": "KEY=1\n", "ok.txt": "ok\n"})
	res, _ := read(t, root, Input{Path: "prod.env"}, Options{Authorizer: denyAll{}})
	if res.Error.Code != CodeDenied || res.Error.Phase != PhaseAuthorize || res.File != nil ||
		res.Notes[0].Code != "denied" || res.Notes[0].Severity != "warning" || res.Error.Data.Source != "secret-file" || res.Error.Data.Pattern != "*.env" {
		t.Fatalf("%+v %+v", res.Error, res.Notes)
	}
	golden(t, "denied", res)
	res, _ = read(t, root, Input{Path: "ok.txt"}, Options{Authorizer: denyAll{}})
	if last := res.Notes[len(res.Notes)-1]; res.Status != StatusOK || last.Code != "audited" {
		t.Errorf("allow note: %+v", res.Notes)
	}
	if os.Geteuid() == 0 {
		t.Log("root reads mode 000 files; the CLI script read_denied.txtar tests as nobody")
		return
	}
	os.Chmod(filepath.Join(dir, "ok.txt"), 0)
	res, _ = read(t, root, Input{Path: "ok.txt"}, Options{})
	if res.Error == nil || res.Error.Code != CodePermissionDenied {
		t.Errorf("mode 000: %+v", res.Error)
	}
}

func TestInvalidInputAndAbort(t *testing.T) {
	root, _ := ws(t, map[string]string{"f.txt": "x\n"})
	zero, neg := 0, -4
	for _, i := range []Input{{Path: ""}, {Path: "f.txt", Offset: &zero}, {Path: "f.txt", Limit: &neg}, {Path: "a\x00b"}, {Path: "\xff"}} {
		res, _ := read(t, root, i, Options{})
		if res.Error == nil || res.Error.Code != CodeInvalidInput || res.Request != nil || res.Error.Phase != PhaseInput {
			t.Errorf("%+v: %+v", i, res.Error)
		}
	}
	res, _ := read(t, root, Input{Path: "f.txt", Offset: &zero}, Options{})
	golden(t, "invalid-input", res)
	res, _ = ParseCounts(&Input{Path: "f.txt"}, "1", "ten")
	if res.Error.Code != CodeInvalidInput || res.Request != nil {
		t.Errorf("ParseCounts: %+v", res.Error)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Read(ctx, root, Input{Path: "f.txt"}, Options{})
	if res.Error == nil || res.Error.Code != CodeAborted || res.Error.Phase != PhaseInput || err == nil {
		t.Errorf("cancelled: %+v", res.Error)
	}
}

type noOpinion struct{}

func (noOpinion) ID() string                      { return "none" }
func (noOpinion) Classify(Sample) (Verdict, bool) { return Verdict{}, false }

type panics struct{}

func (panics) ID() string                      { return "boom" }
func (panics) Classify(Sample) (Verdict, bool) { panic("classifier bug") }

type repair struct{}

func (repair) Resolve(_ context.Context, _ *workspace.Root, p string) (string, *Note) {
	to := strings.ReplaceAll(p, "\u00a0", " ")
	return to, &Note{Code: "path-repaired", Severity: "warning", Message: "used " + to, Data: &NoteData{From: p, To: to}}
}

func TestExtensions(t *testing.T) {
	root, _ := ws(t, map[string]string{"a b.txt": "x\n"})
	res, _ := read(t, root, Input{Path: "a b.txt"}, Options{Classifiers: []Classifier{noOpinion{}}})
	if res.Error == nil || res.Error.Code != CodeUnsupportedBackend || res.Error.Phase != PhaseSampling || res.File == nil {
		t.Errorf("no opinion: %+v", res.Error)
	}
	res, _ = read(t, root, Input{Path: "a b.txt"}, Options{Classifiers: []Classifier{panics{}}})
	if res.Error == nil || res.Error.Code != CodeExtensionFailed || res.Error.Data.ID != "boom" || res.File != nil {
		t.Errorf("panic: %+v, file %+v (seed 003: null)", res.Error, res.File)
	}
	res, _ = read(t, root, Input{Path: "a\u00a0b.txt"}, Options{Resolver: repair{}})
	if res.Status != StatusOK || *res.File.ResolvedFrom != "a\u00a0b.txt" || res.Notes[len(res.Notes)-1].Code != "path-repaired" {
		t.Errorf("resolver: %+v %+v", res.File, res.Notes)
	}
}

// A 1 GB file: 65 MiB of text, then a sparse tail. The scan stops at its
// limit, the totals are inexact, memory stays flat and the view still
// works, far into the scanned part too.
func TestHugeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 65 MiB")
	}
	root, dir := ws(t, nil)
	p := filepath.Join(dir, "huge.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("0123456789", 6) + " naïve\n") // 68 bytes
	chunk := bytes.Repeat(line, 1<<14)
	for written := 0; written < 65<<20; written += len(chunk) {
		f.Write(chunk)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Chtimes(p, fixedMtime, fixedMtime)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, _ := read(t, root, in("huge.txt", 0, 3), Options{})
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading 64 MiB allocated %d bytes", alloc)
	}
	lim := int64(64 << 20)
	if res.Totals.Exact || res.Totals.Lines != nil || res.Totals.Bytes != 1<<30 || res.Observation.ContentID != nil ||
		!res.Continuation.Available || res.Truncation.Reasons[1] != "scan-limit" {
		t.Fatalf("totals %+v truncation %+v", res.Totals, res.Truncation)
	}
	golden(t, "huge", res)
	// The last complete line before the limit can be read; the one the
	// limit cuts cannot, and the offset-unreached note says where to go.
	lastComplete := int(lim / int64(len(line)))
	res, _ = read(t, root, in("huge.txt", lastComplete, 0), Options{})
	if len(res.View.Lines) != 1 || res.View.Lines[0].Text != string(line[:len(line)-1]) || res.Continuation.Available {
		t.Fatalf("last line: %+v %+v", res.View, res.Continuation)
	}
	res, _ = read(t, root, in("huge.txt", lastComplete+1, 0), Options{})
	if n := res.Notes[0]; n.Code != "offset-unreached" || *n.Data.ReachedLine != lastComplete || n.Retry.Offset != lastComplete {
		t.Fatalf("unreached: %+v", res.Notes)
	}
	golden(t, "offset-unreached", res)
	// With a scan limit past the text, the NUL bytes are found by the scan.
	res, _ = read(t, root, in("huge.txt", 0, 1), Options{Limits: Limits{MaxScanBytes: 66 << 20}})
	if res.Status != StatusUnsupported || res.Code != UnsupportedUnknownEncoding {
		// NUL is valid UTF-8: the tail is lines of NULs, counted as text.
		if res.Status != StatusOK || res.Totals.Exact {
			t.Fatalf("past the text: %s %s", res.Status, res.Code)
		}
	}
	_ = rows.Hash
}

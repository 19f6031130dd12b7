package inspect

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/workspace"
)

// language is for code only (issue 10): .tsx is TypeScript, Markdown and
// JSON have none.
func TestLanguage(t *testing.T) {
	for name, want := range map[string]string{
		"a.go": `"go"`, "a.py": `"python"`, "a.pyi": `"python"`,
		"a.ts": `"typescript"`, "a.d.mts": `"typescript"`, "a.tsx": `"typescript"`,
		"a.js": `"javascript"`, "a.jsx": `"javascript"`, "a.mjs": `"javascript"`, "a.cjs": `"javascript"`,
		"a.md": "null", "a.json": "null",
	} {
		d, err := OutlineSource(ctx, name, []byte("\n"))
		if err != nil {
			t.Fatal(err)
		}
		res, out, err := newResultJSON(d)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(out, []byte(`"language":`+want+`,`)) {
			t.Errorf("%s: %s, want language %s", name, out, want)
		}
		checkSameJSON(t, out, res)
	}
}

// A context that is done stops Inspect before it reads, and during a
// parse (lang's tests show the parse itself stops).
func TestCancel(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for b.Len() < 2<<20 {
		b.WriteString("def f(a, b):\n    if a:\n        return [x * b for x in range(a) if x % 3]\n    return {'k': (a, b)}\n\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "big.py"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Inspect(done, root, "big.py"); errs.Code(err) != errs.Cancelled {
		t.Fatalf("cancelled before: err = %v", err)
	}
	soon, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if _, err := Inspect(soon, root, "big.py"); errs.Code(err) != errs.Cancelled {
		t.Fatalf("cancelled during the parse: err = %v", err)
	}
}

package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
)

// manyKeys is a JSON object with n keys, one per line.
func manyKeys(n int) string {
	var b strings.Builder
	b.WriteString("{\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "%q: %d", "key"+strconv.Itoa(i), i)
	}
	b.WriteString("\n}\n")
	return b.String()
}

func TestTruncation(t *testing.T) {
	src := manyKeys(30000)
	d, err := OutlineSource(ctx, "big.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	res, out, err := newResultJSON(d)
	if err != nil {
		t.Fatal(err)
	}
	checkEnvelope(t, out, res)
	n := res.Truncation.AfterEntries
	if res.Truncation.Reason != "output_bytes" || n < 100 || n >= 30001 {
		t.Fatalf("truncation %+v", res.Truncation)
	}
	// The prefix is the longest that fits: one more entry would not.
	more := &Result{Data: d, Truncated: true, Truncation: &Truncation{Reason: "output_bytes", AfterEntries: n + 1}}
	more.Data.Outline = d.Outline[:n+1]
	if len(more.AppendLines(nil)) <= MaxOutputBytes {
		t.Errorf("%d entries kept, but %d would fit", n, n+1)
	}
	// The kept entries are exactly the first ones, in order.
	var doc struct {
		Data struct {
			Outline []struct{ Pointer string } `json:"outline"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	for i, e := range doc.Data.Outline {
		want := ""
		if i > 0 {
			want = "/key" + strconv.Itoa(i-1)
		}
		if e.Pointer != want {
			t.Fatalf("entry %d has pointer %q, want %q", i, e.Pointer, want)
		}
	}
}

// Every size around the bound either fits whole or is cut to a prefix
// whose document is within it.
func TestTruncationBoundary(t *testing.T) {
	for keys := 700; keys < 900; keys++ {
		d, err := OutlineSource(ctx, "b.json", []byte(manyKeys(keys)))
		if err != nil {
			t.Fatal(err)
		}
		res, out, err := newResultJSON(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > MaxOutputBytes {
			t.Fatalf("%d keys: %d bytes", keys, len(out))
		}
		if res.Truncation == nil && len(res.Data.Outline) != keys+1 {
			t.Fatalf("%d keys: complete result with %d entries", keys, len(res.Data.Outline))
		}
	}
}

func TestOutputLimit(t *testing.T) {
	d := Data{Path: strings.Repeat("p", MaxOutputBytes), Kind: KindNone, ParseComplete: true}
	_, err := NewResult(d)
	if errs.Code(err) != CodeOutputLimit {
		t.Fatalf("err = %v, want output_limit", err)
	}
	b := AppendFailure(nil, &d.Path, err)
	if !json.Valid(b) || !bytes.HasPrefix(b, []byte(`{"ok":false,"path":"ppp`)) ||
		!bytes.HasSuffix(b, []byte(`","error":{"code":"output_limit","message":"not even an empty outline fits in 65,536 bytes"}}`+"\n")) {
		t.Errorf("failure document: %s", b)
	}
}

// Within keeps the longest prefix of the outline that fits a tighter bound,
// and a cut outline stays marked cut.
func TestResultWithin(t *testing.T) {
	var src strings.Builder
	src.WriteString("package p\n")
	for i := range 3000 {
		fmt.Fprintf(&src, "func F%04d() {}\n", i)
	}
	d, err := OutlineSource(context.Background(), "p.go", []byte(src.String()))
	if err != nil {
		t.Fatal(err)
	}
	full, err := NewResult(d)
	if err != nil || !full.Truncated {
		t.Fatalf("the fixture must pass 64 KiB: %v %v", err, full.Truncated)
	}
	for _, max := range []int{9600, 2000, 400} {
		r, err := full.Within(max)
		if err != nil {
			t.Fatal(err)
		}
		out := r.AppendJSON(nil)
		n := len(r.Data.Outline)
		if len(out) > max || !r.Truncated || r.Truncation.AfterEntries != n || n == 0 {
			t.Fatalf("%d: %d bytes, %d entries, %+v", max, len(out), n, r.Truncation)
		}
		// The next entry would not have fit.
		more := *r
		more.Data.Outline = full.Data.Outline[:n+1]
		more.Truncation = &Truncation{Reason: "output_bytes", AfterEntries: n + 1}
		if len(more.AppendJSON(nil)) <= max {
			t.Errorf("%d: entry %d would have fit", max, n+1)
		}
		checkSameJSON(t, out, r)
	}
	// The printed form, an entry a line, within the bound the same way.
	for _, max := range []int{9600, 2000, 400} {
		r, err := full.WithinLines(max)
		if err != nil {
			t.Fatal(err)
		}
		out := r.AppendLines(nil)
		n := len(r.Data.Outline)
		if len(out) > max || !r.Truncated || r.Truncation.AfterEntries != n || n == 0 || bytes.Count(out, []byte("\n")) != n+2 {
			t.Fatalf("lines %d: %d bytes, %d entries, %+v", max, len(out), n, r.Truncation)
		}
		more := *r
		more.Data.Outline = full.Data.Outline[:n+1]
		more.Truncation = &Truncation{Reason: "output_bytes", AfterEntries: n + 1}
		if len(more.AppendLines(nil)) <= max {
			t.Errorf("lines %d: entry %d would have fit", max, n+1)
		}
		checkSameJSON(t, out, r)
	}
	if _, err := full.Within(100); errs.Code(err) != CodeOutputLimit || !strings.Contains(err.Error(), "in 100 bytes") {
		t.Errorf("%v", err)
	}
	// Not cut, and fits: as it is.
	small, _ := NewResult(Data{Path: "a.go", Kind: KindCode, Outline: d.Outline[:2], ParseComplete: true})
	if r, _ := small.Within(9600); r != small || r.Truncated {
		t.Errorf("a result that fits was changed: %+v", r)
	}
}

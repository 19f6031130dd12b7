package read

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

func writeIn(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// collected is a stream's rows as a collector holds them.
type collected struct {
	Rows     []rows.Record
	Complete bool
}

// collect streams path within r into a Collector under budget b: a cut
// result has Complete false and no error.
func collect(ctx context.Context, path string, r Range, b rows.Budget, o StreamOptions) (*collected, error) {
	c := rows.NewCollector(b)
	err := Stream(ctx, path, r, c, o)
	if err != nil && !errs.Is(err, errs.Incomplete) {
		return nil, err
	}
	return &collected{Rows: c.Records, Complete: err == nil}, nil
}

// A collector holds exactly the rows the printer prints.
func TestCollectAgreesWithPrinter(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		b.WriteString("line number ")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\r\n")
	}
	p := writeIn(t, dir, "f.txt", "\uFEFF"+b.String())
	for _, r := range []Range{All, {2, 5}, {2990, 4000}} {
		var out bytes.Buffer
		pr := rows.NewPrinter(&out, rows.DefaultBudget)
		perr := Stream(context.Background(), p, r, pr, StreamOptions{})
		pr.Flush()
		res, err := collect(context.Background(), p, r, rows.DefaultBudget, StreamOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var printed bytes.Buffer
		for _, rec := range res.Rows {
			printed.Write(rows.AppendRow(nil, rec.Line, []byte(rec.Text)))
		}
		if printed.String() != out.String() || res.Complete != (perr == nil) {
			t.Errorf("range %v: collector and printer disagree (complete %v, printer err %v)", r, res.Complete, perr)
		}
		if r == All && (res.Complete || !errs.Is(perr, errs.Incomplete) || res.Rows[0].Text[:3] != "\uFEFF") {
			t.Errorf("whole file: complete %v err %v", res.Complete, perr)
		}
	}
}

func TestReadCancelled(t *testing.T) {
	p := writeIn(t, t.TempDir(), "big.txt", strings.Repeat("a line\n", 200000))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Stream(ctx, p, Range{1, 1}, rows.NewCollector(rows.DefaultBudget), StreamOptions{})
	if errs.Code(err) != errs.Cancelled {
		t.Errorf("err = %v, want cancelled", err)
	}
}

// Under a root, paths are confined by the workspace rules; without one, hread
// reads what the user can read.
func TestReadUnderRoot(t *testing.T) {
	base := t.TempDir()
	rootDir := filepath.Join(base, "root")
	os.Mkdir(rootDir, 0o755)
	writeIn(t, rootDir, "in.txt", "inside\n")
	outside := writeIn(t, base, "out.txt", "outside\n")
	os.Symlink(outside, filepath.Join(rootDir, "link.txt"))
	os.Mkdir(filepath.Join(base, "root-evil"), 0o755)
	writeIn(t, filepath.Join(base, "root-evil"), "x.txt", "evil\n")
	root, err := workspace.Open(rootDir)
	if err != nil {
		t.Fatal(err)
	}
	o := StreamOptions{Root: root}
	res, err := collect(context.Background(), "in.txt", All, rows.DefaultBudget, o)
	if err != nil || len(res.Rows) != 1 || res.Rows[0].Text != "inside" {
		t.Fatalf("in.txt: %+v %v", res, err)
	}
	for _, req := range []string{outside, "link.txt", "../out.txt", "../root-evil/x.txt"} {
		if _, err := collect(context.Background(), req, All, rows.DefaultBudget, o); errs.Code(err) != errs.Outside {
			t.Errorf("%s: err = %v, want %s", req, err, errs.Outside)
		}
	}
	if res, err := collect(context.Background(), outside, All, rows.DefaultBudget, StreamOptions{}); err != nil || res.Rows[0].Text != "outside" {
		t.Errorf("without a root: %+v %v", res, err)
	}
}

// A file name with control characters is quoted in messages.
func TestNameQuoted(t *testing.T) {
	err := Stream(context.Background(), "x\x1b[2J", All, rows.NewCollector(rows.DefaultBudget), StreamOptions{})
	if errs.Code(err) != errs.NotFound || strings.Contains(err.Error(), "\x1b") || !strings.Contains(err.Error(), `"x\x1b[2J"`) {
		t.Errorf("err = %q", err)
	}
}

package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/grep"
	"github.com/rowkit/rowkit/internal/inspect"
	"github.com/rowkit/rowkit/internal/review"
	"github.com/rowkit/rowkit/internal/workspace"
)

// probe serves one engine result through mcp.AddTool with the output
// schema the SDK infers from its Go type (no schema of ours), calls it from
// an in-memory client and returns the structuredContent. The SDK validates
// the output against the schema: a result type its schema does not
// describe fails here.
func probe[T any](t *testing.T, v T) map[string]any {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "probe"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, T, error) {
		return nil, v, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "probe", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%T through mcp.AddTool: %v", v, err)
	}
	if res.IsError {
		t.Fatalf("%T through mcp.AddTool: %s", v, text(res))
	}
	return structured(t, res)
}

// TestResultTypesThroughAddTool is issue 8's probe: inspect, review (both
// detail levels), hread and grep results survive the SDK's inferred schema
// and equal their own JSON encoding once decoded.
func TestResultTypesThroughAddTool(t *testing.T) {
	dir := canon(t, t.TempDir())
	newRepo(t, dir)
	write(t, filepath.Join(dir, "doc.md"), "# A <b> & c\n\n## Sub\n")
	write(t, filepath.Join(dir, "data.json"), `{"a":{"b":[1,2]},"<k>":"v"}`+"\n")
	root, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	for _, f := range []string{"a.go", "doc.md", "data.json", "b.txt"} {
		res, err := inspect.Inspect(ctx, root, f)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "inspect "+f, probe(t, res), decodeJSON(t, res.AppendJSON(nil)))
	}

	for _, detail := range []string{review.DetailSummary, review.DetailFull} {
		rep, err := review.Inspect(ctx, review.Options{Root: root, Repo: ".", Detail: detail, LookupEnv: os.LookupEnv,
			Validations: []review.Planned{{ID: "v", Argv: []string{"echo", "<ok & fine>"}}}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := rep.JSON()
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "review "+detail, probe(t, rep), decodeJSON(t, b))
	}

	q := grep.Query{Patterns: []string{"alpha|package"}, Context: 1}
	plan, err := q.Plan()
	if err != nil {
		t.Fatal(err)
	}
	gr, err := grep.Collect(ctx, plan, grep.Config{Root: root, LookupEnv: os.LookupEnv})
	if err != nil {
		t.Fatal(err)
	}
	if len(gr.Rows) < 2 {
		t.Fatalf("grep found %d rows", len(gr.Rows))
	}
	b, _ := json.Marshal(gr)
	sameJSON(t, "grep", probe(t, gr), decodeJSON(t, b))
	_ = os.Getpid
}

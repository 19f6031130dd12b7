package review_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/cmd"
	"github.com/rowkit/rowkit/internal/review"
)

// repoFixture is a repository with a change of every kind the report
// describes: binary counts (null), a rename with a score, copies, HTML
// characters and bytes that are not UTF-8 in names, an embedded repository,
// and validations with output, one failing, one shortened.
func repoFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	put := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	put("a.txt", "1\n2\n3\n")
	put("bin.dat", "x\x00y")
	put("long.txt", "one\ntwo\nthree\nfour\nfive\nsix\n")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	git("checkout", "-q", "-b", "feature")
	put("bin.dat", "\x00\x01\x02")
	git("mv", "long.txt", "renamed.txt")
	put("<b>&amp;.txt", "html\n")
	git("add", "-A")
	git("commit", "-q", "-m", "feature")
	put("a.txt", "1\n2\n3\n4\n")
	git("add", "a.txt")
	put("renamed.txt", "one\n")
	put("bad\xffname.txt", "x\n")
	put("new dir/u.txt", "u\n")
	git("init", "-q", "embedded")
	return dir
}

var fixtureValidations = []string{"--validate", "echo '<ok> & done'", "--validate", "sh -c 'seq 1 2000; exit 3'", "--max-output-bytes", "256"}

// cliJSON runs rowkit review --format json through the CLI adapter.
func cliJSON(t *testing.T, dir, detail string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args := append([]string{"--repo", dir, "--format", "json", "--detail", detail}, fixtureValidations...)
	err := cmd.Review.Run(context.Background(), &cli.Env{Stdout: &stdout, Stderr: &stderr, LookupEnv: os.LookupEnv}, args)
	if stdout.Len() == 0 {
		t.Fatalf("rowkit review: %v", err)
	}
	return stdout.Bytes()
}

type inspectArgs struct {
	Detail string `json:"detail" jsonschema:"summary or full"`
}

// The Report is served by mcp.AddTool with its schema inferred from the
// type, which the SDK validates every result against; in both detail
// levels, structuredContent decodes equal to the CLI's JSON (durations
// aside), and validations report progress as they start and end.
func TestReportThroughMCP(t *testing.T) {
	dir := repoFixture(t)
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "review-test", Version: "0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "inspect_repository"}, func(ctx context.Context, req *mcp.CallToolRequest, in inspectArgs) (*mcp.CallToolResult, *review.Report, error) {
		o := review.Options{Repo: dir, Detail: in.Detail, MaxOutputBytes: 256, Validations: []review.Planned{
			{ID: "validate:1", Argv: []string{"echo", "<ok> & done"}},
			{ID: "validate:2", Argv: []string{"sh", "-c", "seq 1 2000; exit 3"}},
		}}
		o.Progress = func(p review.Progress) {
			n := float64(2 * p.Index)
			if p.Done {
				n++
			}
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: n, Total: float64(2 * p.Total),
				Message: fmt.Sprintf("%s %s", p.ID, map[bool]string{false: "started", true: p.Status}[p.Done]),
			})
		}
		o.LookupEnv = os.LookupEnv
		r, err := review.Inspect(ctx, o)
		return nil, r, err
	})
	var (
		mu       sync.Mutex
		progress []string
	)
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, fmt.Sprintf("%v/%v %s", req.Params.Progress, req.Params.Total, req.Params.Message))
			mu.Unlock()
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].OutputSchema == nil {
		t.Fatalf("tools %+v, %v", tools, err)
	}
	for _, detail := range []string{review.DetailFull, review.DetailSummary} {
		progress = nil
		params := &mcp.CallToolParams{Name: "inspect_repository", Arguments: inspectArgs{Detail: detail}}
		params.SetProgressToken("p-" + detail)
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Fatalf("%s: %v", detail, err)
		}
		if res.IsError {
			t.Fatalf("%s: tool error %+v", detail, res.Content)
		}
		got, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		want := cliJSON(t, dir, detail)
		full := detail == review.DetailFull
		if full != bytes.Contains(want, []byte(`"added": null`)) || !bytes.Contains(want, []byte(`"pathBase64": `)) || !bytes.Contains(want, []byte(`"embedded/"`)) || !bytes.Contains(want, []byte(`<b>&amp;.txt`)) {
			t.Fatalf("%s: the fixture lacks a case:\n%s", detail, want)
		}
		g, w := decodeWithoutDurations(t, got), decodeWithoutDurations(t, want)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: structuredContent differs from the CLI JSON\nMCP: %s\nCLI: %s", detail, got, want)
		}
		mu.Lock()
		wantProgress := []string{"0/4 validate:1 started", "1/4 validate:1 passed", "2/4 validate:2 started", "3/4 validate:2 failed"}
		if fmt.Sprint(progress) != fmt.Sprint(wantProgress) {
			t.Errorf("%s: progress %q, want %q", detail, progress, wantProgress)
		}
		mu.Unlock()
	}
}

// decodeWithoutDurations decodes JSON and drops every durationMs, the one
// field that differs between two runs.
func decodeWithoutDurations(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "durationMs")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	return v
}

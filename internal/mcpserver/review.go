package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/review"
)

// Review defaults of the MCP tools, tighter than the CLI's: a model reads
// the whole result.
const (
	reviewMaxFiles       = 50       // paths listed per scope
	reviewMaxStreamBytes = 4 << 10  // kept per captured validation stream
	reviewTotalBytes     = 16 << 10 // the whole report (needs the engine's byte budget)
)

// InspectRepositoryInput is the arguments of inspect_repository.
type InspectRepositoryInput struct {
	RepoPath string   `json:"repo_path" jsonschema:"the git work tree: a path relative to the first workspace root, or an absolute path inside a root"`
	BaseRef  string   `json:"base_ref,omitempty" jsonschema:"base of the committed scope: a branch, tag or commit; default origin/HEAD, origin/main, origin/master, main or master"`
	Scopes   []string `json:"scopes,omitempty" jsonschema:"the scopes to list: committed, staged, unstaged, untracked; default all four"`
	Detail   string   `json:"detail,omitempty" jsonschema:"summary (default): the union of the changed paths; full: every scope with added/removed line counts"`
}

// RunValidationsInput is the arguments of run_validations.
type RunValidationsInput struct {
	RepoPath    string   `json:"repo_path" jsonschema:"the git work tree the validations run in: a path relative to the first workspace root, or an absolute path inside a root"`
	Validations []string `json:"validations" jsonschema:"names of validations from the operator's allowlist, run one after another"`
}

// refPattern refuses in the schema what git could read as an option or
// what carries control characters; the engine checks again.
const refPattern = `^[^-\x00-\x1f\x7f][^\x00-\x1f\x7f]*$`

func inspectRepositorySchema() *jsonschema.Schema {
	s := mustSchema[InspectRepositoryInput]()
	s.Properties["repo_path"].MinLength = iptr(1)
	s.Properties["base_ref"].Pattern = refPattern
	s.Properties["base_ref"].MaxLength = iptr(256)
	s.Properties["scopes"].Items.Enum = []any{review.ScopeCommitted, review.ScopeStaged, review.ScopeUnstaged, review.ScopeUntracked}
	s.Properties["scopes"].UniqueItems = true
	s.Properties["detail"].Enum = []any{review.DetailSummary, review.DetailFull}
	return s
}

func (s *Server) runValidationsSchema() *jsonschema.Schema {
	sc := mustSchema[RunValidationsInput]()
	sc.Properties["repo_path"].MinLength = iptr(1)
	v := sc.Properties["validations"]
	v.MinItems = iptr(1)
	v.UniqueItems = true
	enum := make([]any, len(s.allow))
	for i, n := range s.allow {
		enum[i] = n
	}
	v.Items.Enum = enum
	v.Description += ": " + s.allowDescription()
	return sc
}

func (s *Server) allowDescription() string {
	d := ""
	for i, n := range s.allow {
		if i > 0 {
			d += "; "
		}
		d += n
		if v := s.config.Validations[n]; v.Description != "" {
			d += " (" + v.Description + ")"
		}
	}
	return d
}

func iptr(n int) *int { return &n }

func (s *Server) addInspectRepository() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "inspect_repository",
		Title: "What changed in a git repository",
		Description: "Lists the paths changed in a git work tree in four disjoint scopes (committed since the base, staged, unstaged, untracked) with their status, and in detail full their added/removed line counts; never diff bodies. " +
			"Executes nothing from the repository. Bounded: 50 paths per scope, counts stay true; the truncation field says what was left out.",
		InputSchema:  inspectRepositorySchema(),
		OutputSchema: outputSchema[review.Report](),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    true,
			IdempotentHint:  true,
			DestructiveHint: bptr(false),
			OpenWorldHint:   bptr(false),
		},
	}, s.inspectRepository)
}

func (s *Server) inspectRepository(ctx context.Context, req *mcp.CallToolRequest, in InspectRepositoryInput) (*mcp.CallToolResult, *review.Report, error) {
	o := review.Options{
		BaseRef:        in.BaseRef,
		Scopes:         in.Scopes,
		Detail:         in.Detail,
		MaxFiles:       reviewMaxFiles,
		MaxOutputBytes: reviewMaxStreamBytes,
	}
	if o.Detail == "" {
		o.Detail = review.DetailSummary
	}
	return s.review(ctx, req, in.RepoPath, o)
}

// review runs the review engine on a repository confined to the call's
// roots: the path and its git directory are checked before git starts.
func (s *Server) review(ctx context.Context, req *mcp.CallToolRequest, repoPath string, o review.Options) (*mcp.CallToolResult, *review.Report, error) {
	roots := s.callRoots(ctx, req)
	r, dir, err := resolveDir(roots, repoPath)
	if err != nil {
		return nil, nil, withPath(repoPath, err)
	}
	if err := checkRepository(roots, r, dir); err != nil {
		return nil, nil, withPath(repoPath, err)
	}
	if o.BaseRef != "" {
		if err := review.CheckRef(o.BaseRef); err != nil {
			return nil, nil, coded(err)
		}
	}
	o.Repo = dir
	rep, err := review.Inspect(ctx, o)
	if err != nil {
		return nil, nil, withPath(repoPath, coded(err))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(rep.Markdown())}}}, rep, nil
}

func (s *Server) addRunValidations() {
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "run_validations",
		Title: "Run the operator's validations",
		Description: "Runs named validation commands from the operator's allowlist in a git work tree, one after another, and reports what changed plus each command's status, exit code and bounded output (4 KiB per stream, head and tail). " +
			"Only the allowlisted names can run; nothing else, no shell. A validation that fails is a successful call with ok:false. Long runs send progress notifications.",
		InputSchema:  s.runValidationsSchema(),
		OutputSchema: outputSchema[review.Report](),
		Annotations: &mcp.ToolAnnotations{
			ReadOnlyHint:    false,
			IdempotentHint:  false,
			DestructiveHint: bptr(false),
			OpenWorldHint:   bptr(false),
		},
	}, s.runValidations)
}

// progressEvery is how often a long validation run reports progress.
var progressEvery = 2 * time.Second

func (s *Server) runValidations(ctx context.Context, req *mcp.CallToolRequest, in RunValidationsInput) (*mcp.CallToolResult, *review.Report, error) {
	o := review.Options{
		Detail:         review.DetailSummary,
		MaxFiles:       reviewMaxFiles,
		MaxOutputBytes: reviewMaxStreamBytes,
	}
	for _, n := range in.Validations {
		if !contains(s.allow, n) {
			// The schema's enum already refuses it; a client that skips
			// validation still cannot name anything else.
			return nil, nil, fmt.Errorf("%q is not an allowed validation", n)
		}
		p, err := s.config.Plan(n, review.DefaultTimeout)
		if err != nil {
			return nil, nil, coded(err)
		}
		o.Validations = append(o.Validations, p)
	}
	stop := s.heartbeat(ctx, req, fmt.Sprintf("running %d validation(s)", len(o.Validations)))
	defer stop()
	return s.review(ctx, req, in.RepoPath, o)
}

// heartbeat sends a progress notification every progressEvery while a call
// runs, when the client asked for progress. It returns the function that
// stops it.
func (s *Server) heartbeat(ctx context.Context, req *mcp.CallToolRequest, what string) func() {
	if req == nil || req.Session == nil || req.Params.GetProgressToken() == nil {
		return func() {}
	}
	token := req.Params.GetProgressToken()
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				secs := time.Since(start).Seconds()
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token,
					Progress:      secs,
					Message:       fmt.Sprintf("%s: %.0fs", what, secs),
				})
			}
		}
	}()
	return func() { close(done); <-finished }
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

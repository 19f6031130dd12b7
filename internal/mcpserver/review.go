package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/review"
)

// InspectRepositoryInput is the arguments of inspect_repository.
type InspectRepositoryInput struct {
	RepoPath string   `json:"repo_path"`
	BaseRef  string   `json:"base_ref,omitempty" jsonschema:"default origin/HEAD, origin/main, main or master"`
	Scopes   []string `json:"scopes,omitempty"`
	Detail   string   `json:"detail,omitempty" jsonschema:"full adds line counts"`
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
	register(s, &mcp.Tool{
		Name:  "inspect_repository",
		Title: "What changed in a git repository",
		Description: "Lists what changed in a git work tree (git status, git diff --stat) in four scopes: committed since base_ref, staged, unstaged, untracked. " +
			"No diff bodies; runs nothing from the repository; 50 paths per scope.",
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
		BaseRef: in.BaseRef,
		Scopes:  in.Scopes,
		Detail:  in.Detail,
	}
	if o.Detail == "" {
		o.Detail = review.DetailSummary
	}
	return s.review(ctx, req, in.RepoPath, o)
}

// review runs the review engine on a repository confined to the root the
// path lies in, with the server's bounds: the engine resolves the path and
// refuses a repository whose top level or git directory lies outside that
// root before git or any validation runs.
func (s *Server) review(ctx context.Context, req *mcp.CallToolRequest, repoPath string, o review.Options) (*mcp.CallToolResult, *review.Report, error) {
	r, rel, err := locate(s.callRoots(ctx, req), repoPath)
	if e, ok := errs.As(err); ok && e.Code == errs.NotFound {
		// The engine's code for a repository path that names nothing.
		err = errs.New(review.CodeRepoNotFound, "the repository path: "+e.Msg).WithHint("pass the path of a git work tree")
	}
	if err != nil {
		return nil, nil, withPath(repoPath, err)
	}
	o.Root, o.Repo = r.ws, rel
	o.MaxFiles = review.ServerMaxFiles
	o.MaxOutputBytes = review.ServerMaxOutputBytes
	o.MaxTotalOutputBytes = review.ServerMaxTotalOutputBytes
	bound := s.resultBytes(req)
	if bound > 0 {
		// The captured output takes at most a third of what the client
		// passes whole, the lists the rest (reportWithin).
		o.MaxTotalOutputBytes = min(o.MaxTotalOutputBytes, bound/3)
		o.MaxOutputBytes = min(o.MaxOutputBytes, bound/6)
	}
	o.LookupEnv = s.env
	rep, err := review.Inspect(ctx, o)
	if err != nil {
		return nil, nil, withPath(repoPath, err)
	}
	reportWithin(rep, bound)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(rep.Markdown())}}}, rep, nil
}

func (s *Server) addRunValidations() {
	register(s, &mcp.Tool{
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

// progressEvery is how often a long validation reports that it still runs.
var progressEvery = 2 * time.Second

func (s *Server) runValidations(ctx context.Context, req *mcp.CallToolRequest, in RunValidationsInput) (*mcp.CallToolResult, *review.Report, error) {
	o := review.Options{Detail: review.DetailSummary}
	for _, n := range in.Validations {
		if !contains(s.allow, n) {
			// The schema's enum already refuses it; a client that skips
			// validation still cannot name anything else.
			return nil, nil, errs.Errorf(errs.Usage, "%q is not an allowed validation", n)
		}
		p, err := s.config.Plan(n, review.DefaultTimeout)
		if err != nil {
			return nil, nil, err
		}
		o.Validations = append(o.Validations, p)
	}
	pr := newProgress(ctx, req)
	defer pr.stop()
	o.Progress = pr.validation
	return s.review(ctx, req, in.RepoPath, o)
}

// progress sends MCP progress notifications for one call, when the client
// asked for them: one as each validation starts and ends, and one every
// progressEvery while a validation runs. The value counts notifications,
// so it always increases, as the protocol requires.
type progress struct {
	ctx   context.Context
	req   *mcp.CallToolRequest
	token any

	mu      sync.Mutex
	n       float64
	current string // the running validation's message, "" between them
	done    chan struct{}
	ended   chan struct{}
}

func newProgress(ctx context.Context, req *mcp.CallToolRequest) *progress {
	p := &progress{ctx: ctx, req: req, done: make(chan struct{}), ended: make(chan struct{})}
	if req == nil || req.Session == nil || req.Params.GetProgressToken() == nil {
		close(p.ended)
		return p
	}
	p.token = req.Params.GetProgressToken()
	start := time.Now()
	go func() {
		defer close(p.ended)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				p.mu.Lock()
				if p.current != "" {
					p.sendLocked(fmt.Sprintf("%s (%.0fs)", p.current, time.Since(start).Seconds()))
				}
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *progress) validation(v review.Progress) {
	if p.token == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	msg := fmt.Sprintf("validation %d of %d (%s)", v.Index+1, v.Total, v.ID)
	if v.Done {
		p.current = ""
		msg += ": " + v.Status
	} else {
		p.current = msg + " running"
		msg += " started"
	}
	p.sendLocked(msg)
}

func (p *progress) sendLocked(msg string) {
	p.n++
	p.req.Session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: msg})
}

func (p *progress) stop() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	<-p.ended
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// reportWithin shortens the lists of rep until its JSON, which both agent
// clients show their model in place of the Markdown, fits bound: every
// list keeps at most its first n entries, n as large as fits; the counts
// stay true, and the truncation field says what each list lost, as the
// engine's own bound (MaxFiles) does.
func reportWithin(rep *review.Report, bound int) {
	size := func() int { j, _ := encode(rep); return len(j) }
	if bound <= 0 || size() <= bound {
		return
	}
	full, trunc := rep.Changes, rep.Truncation
	cut := func(n int) {
		rep.Truncation = trunc
		rep.Truncation.Fields = slices.Clone(trunc.Fields)
		c := &rep.Changes
		c.Files = capReport(rep, "changes.files", full.Files, n)
		c.Committed = capReport(rep, "changes.committed", full.Committed, n)
		c.Staged = capReport(rep, "changes.staged", full.Staged, n)
		c.Unstaged = capReport(rep, "changes.unstaged", full.Unstaged, n)
		c.Untracked = capReport(rep, "changes.untracked", full.Untracked, n)
	}
	longest := max(len(full.Files), len(full.Committed), len(full.Staged), len(full.Unstaged), len(full.Untracked))
	cut(longestFit(longest, func(n int) bool { cut(n); return size() <= bound }))
}

// capReport keeps the first n entries of list, the report's field, and adds
// what it removed to the report's truncation (to the field's entry when
// the engine's own bound already cut it).
func capReport[T any](rep *review.Report, field string, list []T, n int) []T {
	if len(list) <= n {
		return list
	}
	var removed int64
	for _, e := range list[n:] {
		if b, err := json.Marshal(e); err == nil {
			removed += int64(len(b)) + 1 // and its comma
		}
	}
	t := &rep.Truncation
	t.Applied = true
	t.BytesRemoved += removed
	i := slices.IndexFunc(t.Fields, func(f review.Truncated) bool { return f.Field == field })
	if i < 0 {
		t.Fields = append(t.Fields, review.Truncated{Field: field})
		i = len(t.Fields) - 1
	}
	t.Fields[i].ItemsRemoved += len(list) - n
	t.Fields[i].BytesRemoved += removed
	return list[:n]
}

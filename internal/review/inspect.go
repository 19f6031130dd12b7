package review

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/proc"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Options is one review request, after the command line or the MCP call
// has been turned into values. Validations are already authorised.
type Options struct {
	// Repo is the repository path: any directory of a work tree. With
	// Root set it is a request relative to the root, resolved inside it,
	// and a repository whose top level or git directory lies outside the
	// root is refused before git or any validation runs.
	Repo string
	Root *workspace.Root
	// Dir is the base of a relative Repo without a Root (the caller's
	// working directory); "" takes Repo as it is.
	Dir string
	// LookupEnv finds the caller's environment variables: git and the
	// validations keep an allowlist of them and are found on its PATH.
	// Nil is an empty environment, in which git is not found.
	LookupEnv func(key string) (string, bool)

	BaseRef             string   // "" auto-detects
	Scopes              []string // nil is every scope
	Detail              string   // DetailSummary or DetailFull
	MaxFiles            int      // entries kept per list; counts stay true
	GitTimeout          time.Duration
	AllowRepoExecConfig bool

	Validations         []Planned
	MaxOutputBytes      int            // per captured stream, elision marker included
	MaxTotalOutputBytes int            // over all captured streams, shared out once all ran; 0 is no total bound
	TotalBudget         time.Duration  // over all validations
	Progress            func(Progress) // called as each validation starts and ends

	// RepoConfigUsed says that the validations come from the repository's
	// own RepoConfigName (rowkit review --allow-repo-config): the report
	// warns that they do (W_REPO_CONFIG_USED). Otherwise a RepoConfigName
	// in Repo is reported as not read (W_REPO_CONFIG_IGNORED), whoever
	// asks: the CLI and MCP agree.
	RepoConfigUsed bool
}

// Detail levels.
const (
	DetailSummary = "summary"
	DetailFull    = "full"
)

// Defaults of the CLI.
const (
	DefaultMaxFiles       = 1000
	DefaultGitTimeout     = 30 * time.Second
	DefaultMaxOutputBytes = 32 << 10
	// DefaultMaxTotalOutputBytes is the CLI's bound of all captured
	// output together (Options.MaxTotalOutputBytes), seed 004's 256 KiB.
	DefaultMaxTotalOutputBytes = 256 << 10
	DefaultTimeout             = 120 * time.Second
	DefaultTotalBudget         = 600 * time.Second
)

// The tighter bounds an MCP server serves a model with.
const (
	ServerMaxFiles            = 50
	ServerMaxOutputBytes      = 4 << 10
	ServerMaxTotalOutputBytes = 16 << 10
)

// CheckRef refuses a caller-supplied ref that git could read as an option
// or that carries control characters, before it reaches any git call.
func CheckRef(ref string) error {
	switch {
	case ref == "":
		return errorf(CodeUsage, "the base ref is empty", "name a branch, tag or commit")
	case ref[0] == '-':
		return errorf(CodeUsage, fmt.Sprintf("the base ref %q starts with '-'", ref), "refs may not start with a dash")
	}
	for i := 0; i < len(ref); i++ {
		if c := ref[i]; c < 0x20 || c == 0x7f {
			return errorf(CodeUsage, fmt.Sprintf("the base ref %q contains control character 0x%02x at byte %d", ref, c, i), "")
		}
	}
	return nil
}

// Inspect produces the report of one repository: the scopes asked for, then
// the validations. Cancelling ctx stops git and the running validation
// (their process groups) and skips the validations not yet started.
func Inspect(ctx context.Context, o Options) (*Report, error) {
	o = withDefaults(o)
	if o.BaseRef != "" {
		if err := CheckRef(o.BaseRef); err != nil {
			return nil, err
		}
	}
	want := map[string]bool{}
	for _, s := range o.Scopes {
		switch s {
		case ScopeCommitted, ScopeStaged, ScopeUnstaged, ScopeUntracked:
			want[s] = true
		default:
			return nil, errorf(CodeUsage, fmt.Sprintf("unknown scope %q", s), "scopes: committed, staged, unstaged, untracked")
		}
	}
	if o.Detail != DetailFull && o.Detail != DetailSummary {
		return nil, errorf(CodeUsage, fmt.Sprintf("unknown detail %q", o.Detail), "want full or summary")
	}
	for _, p := range o.Validations {
		if len(p.Argv) == 0 || p.Argv[0] == "" {
			return nil, errorf(CodeUsage, fmt.Sprintf("validation %q has no command", p.ID), "")
		}
	}
	r := &Report{
		SchemaVersion: SchemaVersion,
		Detail:        o.Detail,
		Scopes:        o.Scopes,
		Validations:   []Validation{},
		Diagnostics:   []Diagnostic{},
		Truncation:    Truncation{Fields: []Truncated{}},
	}
	repo, err := openRepo(ctx, o, want[ScopeCommitted] || o.BaseRef != "")
	if repo.g != nil {
		defer func() { r.GitCalls = int(repo.g.calls.Load()) }()
	}
	if err != nil {
		return nil, err
	}
	g := repo.g
	r.Repository = Repository{Path: repo.top, Head: repo.head}
	r.Diagnostics = append(r.Diagnostics, repo.diags...)

	// Each git call runs in its own goroutine and hands back what it
	// found; only this goroutine touches the report.
	type found struct {
		name      string
		entries   []Entry
		untracked []Untracked
		gitlink   bool
		base      *Base
		diags     []Diagnostic
		err       error
	}
	results := make(chan found)
	running := 0
	launch := func(f func() found) {
		running++
		go func() { results <- f() }()
	}
	diffArgs := []string{"diff", "--raw", "--numstat", "-z", "-M", "-C", "--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=dirty"}
	diff := func(name string, args ...string) {
		launch(func() found {
			out, err := g.must(ctx, args...)
			if err != nil {
				return found{err: err}
			}
			es, err := parseDiff(out)
			if err != nil {
				return found{err: errorf(CodeGitFailed, fmt.Sprintf("reading git's %s output: %v", name, err), "")}
			}
			return found{name: name, entries: es}
		})
	}
	if want[ScopeCommitted] && !repo.head.Unborn {
		launch(func() found {
			es, base, diags, err := inspectCommitted(ctx, g, repo.base, repo.head.Oid, diffArgs)
			return found{name: ScopeCommitted, entries: es, base: base, diags: diags, err: err}
		})
	}
	if want[ScopeStaged] {
		args := append(append([]string{}, diffArgs...), "--cached")
		if !repo.head.Unborn {
			args = append(args, repo.head.Oid)
		}
		diff(ScopeStaged, append(args, "--")...)
	}
	if want[ScopeUnstaged] {
		diff(ScopeUnstaged, append(append([]string{}, diffArgs...), "--")...)
	}
	// The index listing finds gitlinks (submodules, with or without a
	// .gitmodules entry) and, in the same call, the untracked paths.
	launch(func() found {
		args := []string{"ls-files", "-z", "-t", "--stage"}
		if want[ScopeUntracked] {
			args = append(args, "--others", "--exclude-standard")
		}
		out, err := g.must(ctx, append(args, "--")...)
		if err != nil {
			return found{err: err}
		}
		us, gitlink, err := parseIndexList(out)
		if err != nil {
			return found{err: errorf(CodeGitFailed, "reading git's index listing: "+err.Error(), "")}
		}
		return found{name: ScopeUntracked, untracked: us, gitlink: gitlink}
	})
	var (
		firstErr  error
		scopes    = map[string][]Entry{}
		untracked []Untracked
		gitlink   bool
	)
	for ; running > 0; running-- {
		f := <-results
		switch {
		case f.err != nil:
			if firstErr == nil {
				firstErr = f.err
			}
		case f.name == ScopeUntracked:
			untracked, gitlink = f.untracked, f.gitlink
		default:
			scopes[f.name] = f.entries
			if f.base != nil {
				r.Repository.Base = f.base
			}
			r.Diagnostics = append(r.Diagnostics, f.diags...)
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	assemble(r, o, scopes, untracked)
	if _, err := os.Lstat(filepath.Join(repo.top, ".gitmodules")); err == nil || gitlink {
		r.warn("W_SUBMODULES", "the repository has submodules; their contents are not inspected (only a changed submodule commit is reported)", "")
	}
	if o.Root != nil && len(o.Validations) > 0 {
		// Validations run by path: not in whatever replaced the root.
		if err := o.Root.Check(); err != nil {
			return nil, err
		}
	}
	var cut []Truncated
	r.Validations, cut = runValidations(ctx, o, repo.top)
	r.OK = true
	for _, v := range r.Validations {
		if v.Status != StatusPassed {
			r.OK = false
		}
	}
	for _, t := range cut {
		r.truncate(t)
	}
	return r, nil
}

func withDefaults(o Options) Options {
	if o.Scopes == nil {
		o.Scopes = AllScopes
	}
	if o.Detail == "" {
		o.Detail = DetailFull
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.GitTimeout <= 0 {
		o.GitTimeout = DefaultGitTimeout
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.TotalBudget <= 0 {
		o.TotalBudget = DefaultTotalBudget
	}
	o.Validations = append([]Planned(nil), o.Validations...)
	for i := range o.Validations {
		if o.Validations[i].Timeout <= 0 {
			o.Validations[i].Timeout = DefaultTimeout
		}
	}
	return o
}

// repo is an opened repository: its git runner (set as soon as git may
// run), work tree, HEAD, the base of the committed scope and the
// diagnostics of opening it.
type repo struct {
	g     *git
	top   string
	head  Head
	base  *baseResult
	diags []Diagnostic
}

func (rp *repo) warn(code, msg, hint string) {
	rp.diags = append(rp.diags, Diagnostic{Code: code, Severity: "warning", Message: msg, Hint: hint})
}

// openRepo finds the work tree (inside the root, when there is one, before
// git runs), reads HEAD, audits the repository's executable configuration
// and, when wantBase, resolves the base.
func openRepo(ctx context.Context, o Options, wantBase bool) (repo, error) {
	var rp repo
	abs, expectTop, err := locate(o)
	if err != nil {
		return rp, err
	}
	switch _, err := os.Lstat(filepath.Join(abs, RepoConfigName)); {
	case o.RepoConfigUsed:
		rp.warn("W_REPO_CONFIG_USED", "the validations come from the repository's own "+RepoConfigName, "a repository config can run anything; use it only on repositories you trust")
	case err == nil:
		rp.warn("W_REPO_CONFIG_IGNORED", "the repository's "+RepoConfigName+" was not read: validations come only from the operator's config", "")
	}
	g := &git{dir: abs, timeout: o.GitTimeout, env: proc.Env(o.LookupEnv, gitEnvKeys, gitFixedEnv...)}
	rp.g = g
	var (
		rev, conf       gitResult
		revErr, confErr error
		wg              sync.WaitGroup
	)
	// None of these calls executes configuration, so they run side by side
	// before the audit. rev-parse prints one value a line; only the top
	// level can hold a newline, and it sits between values that cannot, so
	// it is read as whatever lies between them.
	wg.Add(2)
	go func() {
		defer wg.Done()
		rev, revErr = g.run(ctx, "rev-parse", "--is-bare-repository", "--show-toplevel", "HEAD", "--symbolic-full-name", "HEAD", "--")
	}()
	go func() {
		defer wg.Done()
		conf, confErr = g.run(ctx, "config", "--list", "-z", "--show-scope")
	}()
	if wantBase {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rp.base = resolveBase(ctx, g, o.BaseRef)
		}()
	}
	wg.Wait()
	if revErr != nil {
		return rp, revErr
	}
	out := strings.TrimSuffix(string(rev.out), "\n")
	bare, rest, _ := strings.Cut(out, "\n")
	var top string
	switch {
	case strings.Contains(rev.stderr, "dubious ownership"):
		return rp, errorf(CodeUnsafeRepo, fmt.Sprintf("git refuses %s: it is owned by another user", abs),
			"if you trust it, run: git config --global --add safe.directory "+abs)
	case bare == "true":
		return rp, errorf(CodeBareRepo, fmt.Sprintf("%s is a bare repository: there is no work tree to inspect", abs), "pass a work tree (git worktree add) instead")
	case strings.Contains(rev.stderr, "not a git repository"):
		return rp, errorf(CodeNotARepo, fmt.Sprintf("%s is not inside a git work tree", abs), "run git init, or pass the path of a checkout")
	case strings.Contains(rev.stderr, "must be run in a work tree"):
		hint := "pass the work tree of the repository instead"
		if wt, ok := workTreeOf(abs); ok {
			hint = "pass its work tree " + wt + " instead"
		}
		return rp, errorf(CodeNotARepo, fmt.Sprintf("%s is inside a repository's git directory, not its work tree", abs), hint)
	case rev.exit == 0 && strings.HasSuffix(rest, "\n--") && strings.Count(rest, "\n") >= 3:
		// TOP, the oid, the symbolic name and the "--" rev-parse echoes.
		rest = strings.TrimSuffix(rest, "\n--")
		i := strings.LastIndexByte(rest, '\n')
		sym := rest[i+1:]
		j := strings.LastIndexByte(rest[:i], '\n')
		top, rp.head.Oid = rest[:j], rest[j+1:i]
		if sym == "HEAD" {
			rp.head.Detached = true
			rp.warn("W_DETACHED_HEAD", "HEAD is detached at "+rp.head.Oid, "")
		} else {
			rp.head.Branch = strings.TrimPrefix(sym, "refs/heads/")
		}
	case rev.exit != 0 && strings.Contains(rev.stderr, "'HEAD'") && rest != "":
		top = rest
		rp.head.Unborn = true
	default:
		return rp, gitFailure("rev-parse", rev)
	}
	if !isHex(rp.head.Oid) && !rp.head.Unborn {
		return rp, errorf(CodeGitFailed, fmt.Sprintf("git rev-parse gave %q for HEAD", rp.head.Oid), "")
	}
	if expectTop != "" {
		// The repository's own config (core.worktree) may have moved the
		// work tree: nothing more runs unless git agrees with the check.
		if canon, err := filepath.EvalSymlinks(top); err != nil || canon != expectTop {
			return rp, errorf(errs.Outside, fmt.Sprintf("git uses the work tree %s, not %s inside the root", top, expectTop), "")
		}
	}
	rp.top = top
	g.dir = top
	if confErr != nil {
		return rp, confErr
	}
	if conf.exit != 0 {
		return rp, gitFailure("config", conf)
	}
	entries, err := parseConfigList(conf.out)
	if err != nil {
		return rp, errorf(CodeGitFailed, "reading git config --list: "+err.Error(), "")
	}
	if err := audit(g, entries, o.AllowRepoExecConfig, &rp); err != nil {
		return rp, err
	}
	if rp.base != nil && rp.base.err != nil && (o.BaseRef != "" || !rp.head.Unborn) {
		// A base ref that was asked for must resolve, whatever the scopes.
		return rp, rp.base.err
	}
	if rp.head.Unborn {
		// HEAD names a branch with no commit: a new repository, or a
		// branch that was deleted under HEAD.
		res, err := g.run(ctx, "symbolic-ref", "-q", "HEAD")
		if err != nil {
			return rp, err
		}
		name := strings.TrimSpace(string(res.out))
		rp.head.Branch = strings.TrimPrefix(name, "refs/heads/")
		rp.warn("W_NO_COMMITS", fmt.Sprintf("HEAD (%s) has no commit yet; there is no committed scope", name), "")
		rp.base = nil
	}
	return rp, nil
}

// workTreeOf returns the work tree whose git directory holds dir: the
// directory above its last ".git" component.
func workTreeOf(dir string) (string, bool) {
	parts := strings.Split(dir, "/")
	for i := len(parts) - 1; i > 0; i-- {
		if parts[i] == ".git" {
			wt := strings.Join(parts[:i], "/")
			if wt == "" {
				wt = "/"
			}
			return wt, true
		}
	}
	return "", false
}

func isHex(s string) bool {
	if len(s) < 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// baseCandidates are tried in order when no --base-ref is given; the first
// is origin/HEAD, which stands for the branch it points at.
var baseCandidates = []string{
	"refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/remotes/origin/master",
	"refs/heads/main", "refs/heads/master",
}

// baseResult is the base of the committed scope, or why there is none.
type baseResult struct {
	base *Base // nil: none found (a warning, not an error)
	err  error
}

// resolveBase finds the commit the committed scope is measured from: the
// caller's --base-ref (verified, after --end-of-options) or the first of
// baseCandidates that exists.
func resolveBase(ctx context.Context, g *git, ref string) *baseResult {
	base := &Base{Requested: ref}
	if ref != "" {
		res, err := g.run(ctx, "rev-parse", "--verify", "-q", "--end-of-options", ref+"^{commit}")
		if err != nil {
			return &baseResult{err: err}
		}
		oid := strings.TrimSpace(string(res.out))
		if res.exit != 0 || !isHex(oid) {
			return &baseResult{err: errorf(CodeBaseRef, fmt.Sprintf("the base ref %q does not name a commit", ref), "check the name with git rev-parse --verify, or fetch it")}
		}
		base.Ref, base.Oid = ref, oid
		return &baseResult{base: base}
	}
	out, err := g.must(ctx, append([]string{"for-each-ref", "--format=%(refname)%00%(objectname)%00%(symref)"}, baseCandidates...)...)
	if err != nil {
		return &baseResult{err: err}
	}
	found := map[string][2]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Split(l, "\x00"); len(f) == 3 {
			found[f[0]] = [2]string{f[1], f[2]}
		}
	}
	for _, c := range baseCandidates {
		if v, ok := found[c]; ok && isHex(v[0]) {
			base.Ref, base.Oid = strings.TrimPrefix(strings.TrimPrefix(c, "refs/remotes/"), "refs/heads/"), v[0]
			if v[1] != "" {
				base.Ref = strings.TrimPrefix(v[1], "refs/remotes/")
			}
			return &baseResult{base: base}
		}
	}
	return &baseResult{}
}

// inspectCommitted lists the paths changed between the merge base of base
// and HEAD, and HEAD. git diff BASE...HEAD finds the merge base itself; the
// merge-base call beside it only names it in the report, so the two run at
// once. Degraded cases are warnings.
func inspectCommitted(ctx context.Context, g *git, br *baseResult, head string, diffArgs []string) ([]Entry, *Base, []Diagnostic, error) {
	warn := func(code, msg, hint string) []Diagnostic {
		return []Diagnostic{{Code: code, Severity: "warning", Message: msg, Hint: hint}}
	}
	if br == nil || br.base == nil {
		return nil, nil, warn("W_NO_BASE_REF", "no base ref found (origin/HEAD, origin/main, origin/master, main, master); the committed scope is empty", "pass --base-ref"), nil
	}
	base := *br.base
	var (
		mbRes gitResult
		mbErr error
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		mbRes, mbErr = g.run(ctx, "merge-base", base.Oid, head)
	}()
	diffRes, diffErr := g.run(ctx, append(append([]string{}, diffArgs...), base.Oid+"..."+head, "--")...)
	<-done
	if mbErr != nil {
		return nil, nil, nil, mbErr
	}
	mb := strings.TrimSpace(string(mbRes.out))
	if mbRes.exit == 1 && mb == "" {
		return nil, &base, warn("W_NO_MERGE_BASE", fmt.Sprintf("%s and HEAD have no common ancestor (unrelated histories); the committed scope is empty", base.Ref), "pass a --base-ref that shares history with HEAD"), nil
	}
	if mbRes.exit != 0 || !isHex(mb) {
		return nil, nil, nil, gitFailure("merge-base", mbRes)
	}
	base.MergeBase = mb
	if diffErr != nil {
		return nil, nil, nil, diffErr
	}
	if diffRes.exit != 0 {
		return nil, nil, nil, gitFailure("diff", diffRes)
	}
	es, err := parseDiff(diffRes.out)
	if err != nil {
		return nil, nil, nil, errorf(CodeGitFailed, "reading git's committed output: "+err.Error(), "")
	}
	return es, &base, nil, nil
}

// assemble sorts the scopes, builds their union, applies the list bound and
// the detail level.
func assemble(r *Report, o Options, scopes map[string][]Entry, untracked []Untracked) {
	type acc struct {
		f    File
		rank int
	}
	union := map[Path]*acc{}
	rank := func(status string) int {
		for i, s := range statusPrecedence {
			if s == status {
				return i
			}
		}
		return len(statusPrecedence)
	}
	add := func(scope string, f File) {
		a := union[f.Path]
		if a == nil {
			f.Scopes = nil
			a = &acc{f: f, rank: rank(f.Status)}
			union[f.Path] = a
		} else if k := rank(f.Status); k < a.rank {
			a.f.Status, a.f.OrigPath, a.f.OrigPathBase64, a.rank = f.Status, f.OrigPath, f.OrigPathBase64, k
		}
		if f.Kind != "" {
			a.f.Kind = f.Kind
		}
		a.f.Scopes = append(a.f.Scopes, scope)
	}
	for _, name := range []string{ScopeCommitted, ScopeStaged, ScopeUnstaged} {
		es := scopes[name]
		sort.SliceStable(es, func(i, j int) bool { return es[i].Path < es[j].Path })
		for _, e := range es {
			if e.Status == "unmerged" {
				r.warnOnce("W_UNMERGED_PATHS", "there are unmerged paths: a merge, rebase or cherry-pick is in progress", "resolve the conflicts and git add the files")
			}
			add(name, File{Path: e.Path, PathBase64: e.PathBase64, Status: e.Status, OrigPath: e.OrigPath, OrigPathBase64: e.OrigPathBase64})
		}
	}
	sort.SliceStable(untracked, func(i, j int) bool { return untracked[i].Path < untracked[j].Path })
	for _, u := range untracked {
		add(ScopeUntracked, File{Path: u.Path, PathBase64: u.PathBase64, Kind: u.Kind, Status: u.Status})
	}
	files := make([]File, 0, len(union))
	for _, a := range union {
		files = append(files, a.f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	c := &r.Changes
	c.Counts = Counts{
		Committed: len(scopes[ScopeCommitted]), Staged: len(scopes[ScopeStaged]),
		Unstaged: len(scopes[ScopeUnstaged]), Untracked: len(untracked),
		Files: len(files),
	}
	c.Files = capList(r, "changes.files", files, o.MaxFiles)
	if o.Detail == DetailFull {
		c.Committed = capList(r, "changes.committed", scopes[ScopeCommitted], o.MaxFiles)
		c.Staged = capList(r, "changes.staged", scopes[ScopeStaged], o.MaxFiles)
		c.Unstaged = capList(r, "changes.unstaged", scopes[ScopeUnstaged], o.MaxFiles)
		c.Untracked = capList(r, "changes.untracked", untracked, o.MaxFiles)
	}
}

// capList keeps the first max entries of a list and records what it
// removed: the entries, and their size as compact JSON.
func capList[T any](r *Report, field string, list []T, max int) []T {
	if len(list) <= max {
		return list
	}
	var n int64
	for _, e := range list[max:] {
		b, err := json.Marshal(e)
		if err == nil {
			n += int64(len(b)) + 1 // and its comma
		}
	}
	r.truncate(Truncated{Field: field, ItemsRemoved: len(list) - max, BytesRemoved: n})
	return list[:max]
}

func (r *Report) truncate(t Truncated) {
	r.Truncation.Applied = true
	r.Truncation.BytesRemoved += t.BytesRemoved
	r.Truncation.Fields = append(r.Truncation.Fields, t)
}

func (r *Report) warnOnce(code, msg, hint string) {
	for _, d := range r.Diagnostics {
		if d.Code == code {
			return
		}
	}
	r.warn(code, msg, hint)
}

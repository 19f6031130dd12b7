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
)

// Options is one review request, after the command line or the MCP call
// has been turned into values. Validations are already authorised.
type Options struct {
	Repo                string
	BaseRef             string   // "" auto-detects
	Scopes              []string // nil is every scope
	Detail              string   // DetailSummary or DetailFull
	MaxFiles            int      // entries kept per list; counts stay true
	GitTimeout          time.Duration
	AllowRepoExecConfig bool

	Validations    []Planned
	MaxOutputBytes int           // per captured stream
	TotalBudget    time.Duration // over all validations

	// Diagnostics decided before the inspection (an ignored repository
	// config, say) that belong in the report.
	Diagnostics []Diagnostic
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
	DefaultTimeout        = 120 * time.Second
	DefaultTotalBudget    = 600 * time.Second
)

// CheckRef refuses a caller-supplied ref that git could read as an option
// or that carries control characters, before it reaches any git call.
func CheckRef(ref string) error {
	switch {
	case ref == "":
		return errorf(CodeUsage, "--base-ref is empty", "name a branch, tag or commit")
	case ref[0] == '-':
		return errorf(CodeUsage, fmt.Sprintf("--base-ref %q starts with '-'", ref), "refs may not start with a dash")
	}
	for i := 0; i < len(ref); i++ {
		if c := ref[i]; c < 0x20 || c == 0x7f {
			return errorf(CodeUsage, fmt.Sprintf("--base-ref %q contains control character 0x%02x at byte %d", ref, c, i), "")
		}
	}
	return nil
}

// Inspect produces the report of one repository: the scopes asked for, then
// the validations.
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
		Diagnostics:   append([]Diagnostic{}, o.Diagnostics...),
		Truncation:    Truncation{Fields: []Truncated{}},
	}
	g, top, base, err := openRepo(ctx, o, r, want[ScopeCommitted])
	if err != nil {
		return nil, err
	}
	defer func() { r.GitCalls = int(g.calls.Load()) }()
	r.Repository.Path = top

	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		firstErr  error
		committed []Entry
		scopes    = map[string][]Entry{}
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	diffArgs := []string{"diff", "--raw", "--numstat", "-z", "-M", "-C", "--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=dirty"}
	scope := func(name string, args ...string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := g.must(ctx, args...)
			if err != nil {
				fail(err)
				return
			}
			var es []Entry
			if name == ScopeUntracked {
				es, err = parseUntracked(out)
			} else {
				es, err = parseDiff(out)
			}
			if err != nil {
				fail(errorf(CodeGitFailed, fmt.Sprintf("reading git's %s output: %v", name, err), ""))
				return
			}
			mu.Lock()
			scopes[name] = es
			mu.Unlock()
		}()
	}
	if want[ScopeCommitted] && !r.Repository.Head.Unborn {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			committed, err = inspectCommitted(ctx, g, base, r, &mu, diffArgs)
			if err != nil {
				fail(err)
			}
		}()
	}
	if want[ScopeStaged] {
		args := append(append([]string{}, diffArgs...), "--cached")
		if !r.Repository.Head.Unborn {
			args = append(args, r.Repository.Head.Oid)
		}
		scope(ScopeStaged, append(args, "--")...)
	}
	if want[ScopeUnstaged] {
		scope(ScopeUnstaged, append(append([]string{}, diffArgs...), "--")...)
	}
	if want[ScopeUntracked] {
		scope(ScopeUntracked, "ls-files", "--others", "--exclude-standard", "-z", "--")
	}
	wg.Wait()
	r.GitCalls = int(g.calls.Load())
	if firstErr != nil {
		return nil, firstErr
	}
	scopes[ScopeCommitted] = committed
	assemble(r, o, scopes)
	if _, err := os.Lstat(filepath.Join(top, ".gitmodules")); err == nil {
		r.warn("W_SUBMODULES", "the repository has submodules; their contents are not inspected (only a changed submodule commit is reported)", "")
	}
	runValidations(ctx, o, r, top)
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

// openRepo finds the work tree, reads HEAD, audits the repository's
// executable configuration and, when the committed scope is wanted,
// resolves the base; it returns the git runner the scopes use.
func openRepo(ctx context.Context, o Options, r *Report, wantBase bool) (*git, string, *baseResult, error) {
	abs, err := filepath.Abs(o.Repo)
	if err != nil {
		return nil, "", nil, errorf(CodeRepoNotFound, fmt.Sprintf("--repo %q: %v", o.Repo, err), "")
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, "", nil, errorf(CodeRepoNotFound, fmt.Sprintf("--repo %s is not a directory", abs), "pass the path of a git work tree")
	}
	g := &git{dir: abs, timeout: o.GitTimeout}
	var (
		rev, conf       gitResult
		revErr, confErr error
		base            *baseResult
		wg              sync.WaitGroup
	)
	// None of these calls executes configuration, so they run side by side
	// before the audit.
	wg.Add(2)
	go func() {
		defer wg.Done()
		rev, revErr = g.run(ctx, "rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-toplevel", "HEAD", "--symbolic-full-name", "HEAD", "--")
	}()
	go func() {
		defer wg.Done()
		conf, confErr = g.run(ctx, "config", "--list", "-z", "--show-scope")
	}()
	if wantBase {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base = resolveBase(ctx, g, o.BaseRef)
		}()
	}
	wg.Wait()
	if revErr != nil {
		return g, "", nil, revErr
	}
	lines := strings.Split(strings.TrimSuffix(string(rev.out), "\n"), "\n")
	switch {
	case strings.Contains(rev.stderr, "dubious ownership"):
		return g, "", nil, errorf(CodeUnsafeRepo, fmt.Sprintf("git refuses %s: it is owned by another user", abs),
			"if you trust it, run: git config --global --add safe.directory "+abs)
	case len(lines) >= 1 && lines[0] == "true":
		return g, "", nil, errorf(CodeBareRepo, fmt.Sprintf("%s is a bare repository: there is no work tree to inspect", abs), "pass a work tree (git worktree add) instead")
	case strings.Contains(rev.stderr, "not a git repository"):
		return g, "", nil, errorf(CodeNotARepo, fmt.Sprintf("%s is not inside a git work tree", abs), "run git init, or pass the path of a checkout")
	case rev.exit == 0 && len(lines) == 6:
		r.Repository.Head.Oid = lines[3]
		if lines[4] == "HEAD" {
			r.Repository.Head.Detached = true
			r.warn("W_DETACHED_HEAD", "HEAD is detached at "+lines[3], "")
		} else {
			r.Repository.Head.Branch = strings.TrimPrefix(lines[4], "refs/heads/")
		}
	case rev.exit != 0 && len(lines) == 3 && strings.Contains(rev.stderr, "'HEAD'"):
		r.Repository.Head.Unborn = true
	default:
		return g, "", nil, gitFailure("rev-parse", rev)
	}
	if !isHex(r.Repository.Head.Oid) && !r.Repository.Head.Unborn {
		return g, "", nil, errorf(CodeGitFailed, fmt.Sprintf("git rev-parse gave %q for HEAD", r.Repository.Head.Oid), "")
	}
	top := lines[2]
	g.dir = top
	if confErr != nil {
		return g, "", nil, confErr
	}
	if conf.exit != 0 {
		return g, "", nil, gitFailure("config", conf)
	}
	entries, err := parseConfigList(conf.out)
	if err != nil {
		return g, "", nil, errorf(CodeGitFailed, "reading git config --list: "+err.Error(), "")
	}
	if err := audit(g, entries, o.AllowRepoExecConfig, r); err != nil {
		return g, "", nil, err
	}
	if r.Repository.Head.Unborn {
		// HEAD names a branch with no commit: a new repository, or a
		// branch that was deleted under HEAD.
		res, err := g.run(ctx, "symbolic-ref", "-q", "HEAD")
		if err != nil {
			return g, "", nil, err
		}
		name := strings.TrimSpace(string(res.out))
		r.Repository.Head.Branch = strings.TrimPrefix(name, "refs/heads/")
		r.warn("W_NO_COMMITS", fmt.Sprintf("HEAD (%s) has no commit yet; there is no committed scope", name), "")
		return g, top, nil, nil
	}
	if base != nil && base.err != nil {
		return g, "", nil, base.err
	}
	return g, top, base, nil
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
			return &baseResult{err: errorf(CodeBaseRef, fmt.Sprintf("--base-ref %q does not name a commit", ref), "check the name with git rev-parse --verify, or fetch it")}
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
func inspectCommitted(ctx context.Context, g *git, br *baseResult, r *Report, mu *sync.Mutex, diffArgs []string) ([]Entry, error) {
	if br.base == nil {
		mu.Lock()
		r.warn("W_NO_BASE_REF", "no base ref found (origin/HEAD, origin/main, origin/master, main, master); the committed scope is empty", "pass --base-ref")
		mu.Unlock()
		return nil, nil
	}
	base := br.base
	mu.Lock()
	r.Repository.Base = base
	mu.Unlock()
	head := r.Repository.Head.Oid
	var (
		mbRes   gitResult
		mbErr   error
		wg      sync.WaitGroup
		diffRes gitResult
		diffErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		mbRes, mbErr = g.run(ctx, "merge-base", base.Oid, head)
	}()
	diffRes, diffErr = g.run(ctx, append(append([]string{}, diffArgs...), base.Oid+"..."+head, "--")...)
	wg.Wait()
	if mbErr != nil {
		return nil, mbErr
	}
	mb := strings.TrimSpace(string(mbRes.out))
	if mbRes.exit == 1 && mb == "" {
		mu.Lock()
		r.warn("W_NO_MERGE_BASE", fmt.Sprintf("%s and HEAD have no common ancestor (unrelated histories); the committed scope is empty", base.Ref), "pass a --base-ref that shares history with HEAD")
		mu.Unlock()
		return nil, nil
	}
	if mbRes.exit != 0 || !isHex(mb) {
		return nil, gitFailure("merge-base", mbRes)
	}
	mu.Lock()
	base.MergeBase = mb
	mu.Unlock()
	if diffErr != nil {
		return nil, diffErr
	}
	if diffRes.exit != 0 {
		return nil, gitFailure("diff", diffRes)
	}
	es, err := parseDiff(diffRes.out)
	if err != nil {
		return nil, errorf(CodeGitFailed, "reading git's committed output: "+err.Error(), "")
	}
	return es, nil
}

// assemble sorts the scopes, builds their union, applies the list bound and
// the detail level.
func assemble(r *Report, o Options, scopes map[string][]Entry) {
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
	for _, name := range AllScopes {
		es := scopes[name]
		sort.SliceStable(es, func(i, j int) bool { return es[i].Path < es[j].Path })
		for _, e := range es {
			if e.Status == "unmerged" {
				r.warnOnce("W_UNMERGED_PATHS", "there are unmerged paths: a merge, rebase or cherry-pick is in progress", "resolve the conflicts and git add the files")
			}
			a := union[e.Path]
			if a == nil {
				a = &acc{f: File{Path: e.Path, Status: e.Status, OrigPath: e.OrigPath}, rank: rank(e.Status)}
				union[e.Path] = a
			} else if k := rank(e.Status); k < a.rank {
				a.f.Status, a.f.OrigPath, a.rank = e.Status, e.OrigPath, k
			}
			if e.Kind != "" {
				a.f.Kind = e.Kind
			}
			a.f.Scopes = append(a.f.Scopes, name)
		}
	}
	files := make([]File, 0, len(union))
	for _, a := range union {
		files = append(files, a.f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	c := &r.Changes
	c.Counts = Counts{
		Committed: len(scopes[ScopeCommitted]), Staged: len(scopes[ScopeStaged]),
		Unstaged: len(scopes[ScopeUnstaged]), Untracked: len(scopes[ScopeUntracked]),
		Files: len(files),
	}
	c.Files = capList(r, "changes.files", files, o.MaxFiles)
	if o.Detail == DetailFull {
		c.Committed = capList(r, "changes.committed", scopes[ScopeCommitted], o.MaxFiles)
		c.Staged = capList(r, "changes.staged", scopes[ScopeStaged], o.MaxFiles)
		c.Unstaged = capList(r, "changes.unstaged", scopes[ScopeUnstaged], o.MaxFiles)
		c.Untracked = capList(r, "changes.untracked", scopes[ScopeUntracked], o.MaxFiles)
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

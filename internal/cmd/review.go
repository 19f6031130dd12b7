package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/review"
)

// Review is rowkit review as a command.
var Review = &cli.Command{
	Name:    "review",
	Usage:   "rowkit review --repo PATH [options]",
	Summary: "what changed in a git repository (four scopes), and does it still build",
	Help: `Reports the paths changed in four disjoint scopes, with their status and
added/removed line counts (never diff bodies), and optionally runs validation
commands. stdout carries only the report; diagnostics go to stderr.

scopes:
  committed   merge-base(base, HEAD)..HEAD; the base is --base-ref, else
              origin/HEAD's target, origin/main, origin/master, main, master
  staged      index vs HEAD
  unstaged    work tree vs index
  untracked   not in the index, respecting ignore rules (no line counts; an
              embedded repository is one path ending in /)
changes.files is their union: one entry per path with its scopes and one
status by precedence (unmerged > deleted > untracked > renamed > copied >
added > typechange > modified).

options:
  --repo PATH              repository to inspect (required)
  --base-ref REF           base of the committed scope (default: auto-detect)
  --scope LIST             committed,staged,unstaged,untracked; worktree (the
                           last three); all (default)
  --format markdown|json   default markdown
  --detail full|summary    full lists every scope and all validation output;
                           summary lists only the union of paths and the
                           output of validations that did not pass
  --out PATH               write the report to PATH instead of stdout (-)
  --validate "CMD ARGS"    run a command, tokenised without a shell: quotes
                           allowed, shell metacharacters refused (repeatable)
  --validation NAME        run a named validation from the config (repeatable)
  --config FILE            operator config: {"validations": {NAME: {"argv":
                           [...], "timeoutMs": N, "description": "..."}},
                           "mcp": {"allowValidations": [...]}}
  --allow-repo-config      without --config, read <repo>/rowkit.json
  --allow-repo-exec-config let git run programs the repository's own config
                           names (filters, textconv, ...); off by default
  --timeout MS             per-validation timeout (default 120000)
  --budget MS              total time for all validations (default 600000)
  --git-timeout MS         timeout of each git call (default 30000)
  --max-output-bytes N     kept per captured stream, head and tail, elision
                           marker included (default 32768)
  --max-total-output-bytes N
                           kept of all captured streams together; each
                           stream over its share is shortened the same way
                           (default 262144)
  --max-files N            entries listed per scope (default 1000)
  --exit-zero              exit 0 whenever a report was produced
  --debug                  add a stack trace to internal errors
  -v, --version            print the version and exit 0

The report's warnings (W_...) are also printed on stderr, one a line:
rowkit review: CODE: MESSAGE (HINT).
`,
	Exits: []cli.Exit{
		{Status: review.ExitOK, When: "done; nothing failed (or --exit-zero and a report was written); -v or --version"},
		{Status: review.ExitValidationFailed, When: "done; a validation failed (the report is on stdout)"},
		{Status: review.ExitUsage, When: "usage or configuration error: usage (also an unknown option), config, validation_unknown (the JSON report: E_USAGE, E_CONFIG, E_VALIDATION_UNKNOWN)"},
		{Status: review.ExitInspection, When: "the repository could not be inspected: not_found, not_a_repo, unsafe_repository, bare_repository, base_ref_unknown, repo_exec_config, git_failed (the JSON report: E_REPO_NOT_FOUND, E_NOT_A_REPO, E_UNSAFE_REPOSITORY, E_BARE_REPOSITORY, E_BASE_REF_UNKNOWN, E_REPO_EXEC_CONFIG, E_GIT_FAILED)"},
		{Status: review.ExitTimeout, When: "a time budget ran out: a validation timed out or was skipped (the report is on stdout), or git_timeout (E_GIT_TIMEOUT); an interrupt stops validations the same way, and stops git with the code cancelled"},
		{Status: review.ExitInternal, When: "internal error: internal (E_INTERNAL)"},
	},
	Run:  runReview,
	Fail: failReview,
	// Validations run in their own process groups, out of reach of the
	// terminal's Ctrl-C: an interrupt is passed on to them (SIGTERM, then
	// SIGKILL) before rowkit ends.
	Signals: []os.Signal{os.Interrupt, syscall.SIGTERM},
}

// codeReportFailed marks the error that carries the exit status of a
// produced report whose validations did not all pass; its message is the
// stderr line, without a code, since the report itself says what failed.
const codeReportFailed = "E_REPORT_FAILED"

// reportExit is the one place that decides the exit status of a produced
// report: 0 when every validation passed (or exitZero, --exit-zero), 4
// when one timed out or was skipped, else 1 when one failed.
func reportExit(r *review.Report, exitZero bool) error {
	if exitZero {
		return nil
	}
	failed, status := 0, review.ExitOK
	for _, v := range r.Validations {
		switch v.Status {
		case review.StatusPassed:
			continue
		case review.StatusTimedOut, review.StatusSkipped:
			status = review.ExitTimeout
		default:
			if status == review.ExitOK {
				status = review.ExitValidationFailed
			}
		}
		failed++
	}
	if status == review.ExitOK {
		return nil
	}
	return errs.Errorf(codeReportFailed, "%d of %d validations did not pass", failed, len(r.Validations)).WithExit(status)
}

// failReview prints the one stderr line of a failure; the exit status is
// the error's own (errs.ExitCode), as for every command.
func failReview(env *cli.Env, err error) int {
	e, ok := errs.As(err)
	if !ok {
		e = reviewError(review.CodeInternal, err.Error(), "")
	}
	if e.Code == codeReportFailed {
		fmt.Fprintf(env.Stderr, "%s: %s\n", env.Name, e.Msg)
	} else {
		io.WriteString(env.Stderr, cli.Lines(env.Name, cliWords(e)))
	}
	return errs.ExitCode(e)
}

// flagWords are the engine's names for what a caller asked for, and the
// flags a command-line user gave them with.
var flagWords = strings.NewReplacer(
	"the base ref", "--base-ref",
	"the repository path", "--repo",
	"the validation command", "--validate",
	"the validation name", "--validation",
	"raise the git timeout", "raise --git-timeout",
	"allow the repository's exec config", "pass --allow-repo-exec-config",
)

// cliWords words an engine error for the command line: the flag a value
// came from instead of the engine's name for it.
func cliWords(e *errs.Error) *errs.Error {
	w := *e
	w.Msg, w.Hint = flagWords.Replace(e.Msg), flagWords.Replace(e.Hint)
	return &w
}

// reviewError is an error of the adapter, with the exit status the engine
// gives its code.
func reviewError(code, msg, hint string) *errs.Error {
	exit := review.ExitUsage
	if code == review.CodeInternal {
		exit = review.ExitInternal
	}
	return errs.New(code, msg).WithHint(hint).WithExit(exit)
}

// reviewOptions are rowkit review's options: long only, each once except
// the validations.
var reviewOptions = []cli.Option{
	{Long: []string{"repo"}, Value: true},
	{Long: []string{"base-ref"}, Value: true},
	{Long: []string{"scope"}, Value: true},
	{Long: []string{"format"}, Value: true},
	{Long: []string{"detail"}, Value: true},
	{Long: []string{"out"}, Value: true},
	{Long: []string{"validate"}, Value: true, Repeat: true},
	{Long: []string{"validation"}, Value: true, Repeat: true},
	{Long: []string{"config"}, Value: true},
	{Long: []string{"allow-repo-config"}},
	{Long: []string{"allow-repo-exec-config"}},
	{Long: []string{"timeout"}, Value: true},
	{Long: []string{"budget"}, Value: true},
	{Long: []string{"git-timeout"}, Value: true},
	{Long: []string{"max-output-bytes"}, Value: true},
	{Long: []string{"max-total-output-bytes"}, Value: true},
	{Long: []string{"max-files"}, Value: true},
	{Long: []string{"exit-zero"}},
	{Long: []string{"debug"}},
	{Long: []string{"version"}, Short: 'v'},
}

type flags struct {
	o         review.Options
	format    string
	out       string
	config    string
	allowRepo bool
	exitZero  bool
	debug     bool
	timeout   time.Duration
	steps     []step // --validate and --validation in command-line order
}

type step struct {
	name string // --validation NAME
	cmd  string // --validate CMD
}

func runReview(ctx context.Context, env *cli.Env, args []string) (err error) {
	f, err := parseFlags(args)
	if errors.Is(err, errVersion) {
		if _, err := fmt.Fprintln(env.Stdout, cli.Version()); err != nil {
			return reviewError(review.CodeUsage, fmt.Sprintf("writing the version: %v", pathCause(err)), "")
		}
		return nil
	}
	if err != nil {
		return err
	}
	f.o.Dir, f.o.LookupEnv = env.Dir, env.LookupEnv
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprint(p)
			if f.debug {
				msg += "\n" + string(debug.Stack())
			}
			err = reviewError(review.CodeInternal, msg, "please report this")
		}
	}()
	if err := plan(env, f); err != nil {
		return err
	}
	r, err := review.Inspect(ctx, f.o)
	if err != nil {
		return err
	}
	var out []byte
	if f.format == "json" {
		if out, err = r.JSON(); err != nil {
			return reviewError(review.CodeInternal, "encoding the report: "+err.Error(), "")
		}
	} else {
		out = r.Markdown()
	}
	if f.out == "-" {
		_, err = env.Stdout.Write(out)
	} else {
		err = writeOut(env.Path(f.out), out)
	}
	if errors.Is(err, syscall.ENXIO) {
		return reviewError(review.CodeUsage, fmt.Sprintf("writing the report to %s: a FIFO with no reader", f.out), "")
	}
	if err != nil {
		return reviewError(review.CodeUsage, fmt.Sprintf("writing the report to %s: %v", f.out, pathCause(err)), "")
	}
	// stdout carries only the report: its warnings are said on stderr too.
	for _, d := range r.Diagnostics {
		io.WriteString(env.Stderr, cli.Lines(env.Name, cliWords(errs.New(d.Code, d.Message).WithHint(d.Hint))))
	}
	return reportExit(r, f.exitZero)
}

// errVersion is what the parser returns for -v or --version: the version
// is printed instead of a report.
var errVersion = errors.New("version requested")

// plan turns --validate and --validation into authorised commands and
// decides which config is read.
func plan(env *cli.Env, f *flags) error {
	var cfg *review.Config
	var err error
	repoCfg := filepath.Join(f.o.Repo, review.RepoConfigName)
	_, statErr := os.Stat(env.Path(repoCfg))
	switch {
	case f.config != "":
		if cfg, err = review.LoadConfig(env.Dir, f.config); err != nil {
			return err
		}
	case f.allowRepo && statErr == nil:
		if cfg, err = review.LoadConfig(env.Dir, repoCfg); err != nil {
			return err
		}
		f.o.RepoConfigUsed = true
	}
	n := 0
	for _, s := range f.steps {
		if s.name == "" {
			argv, err := review.Tokenize(s.cmd)
			if err != nil {
				return err
			}
			n++
			f.o.Validations = append(f.o.Validations, review.Planned{ID: fmt.Sprintf("validate:%d", n), Argv: argv, Timeout: f.timeout})
			continue
		}
		if cfg == nil {
			return reviewError(review.CodeValidationName, fmt.Sprintf("--validation %q needs a config", s.name), "pass --config FILE")
		}
		p, err := cfg.Plan(s.name, f.timeout)
		if err != nil {
			return err
		}
		f.o.Validations = append(f.o.Validations, p)
	}
	return nil
}

func parseFlags(args []string) (*flags, error) {
	f := &flags{format: "markdown", out: "-", timeout: review.DefaultTimeout}
	f.o.Detail = review.DetailFull
	f.o.MaxTotalOutputBytes = review.DefaultMaxTotalOutputBytes
	ops, err := cli.Parse("review", reviewOptions, args, func(a cli.Arg) error {
		name, val := a.Spelled, a.Value
		var err error
		switch a.Long[0] {
		case "allow-repo-config":
			f.allowRepo = true
		case "allow-repo-exec-config":
			f.o.AllowRepoExecConfig = true
		case "exit-zero":
			f.exitZero = true
		case "debug":
			f.debug = true
		case "version":
			return errVersion
		case "repo":
			f.o.Repo = val
		case "base-ref":
			if err := review.CheckRef(val); err != nil {
				return err
			}
			f.o.BaseRef = val
		case "scope":
			f.o.Scopes, err = parseReviewScopes(val)
		case "format":
			if val != "markdown" && val != "json" {
				err = reviewError(review.CodeUsage, fmt.Sprintf("--format %q: want markdown or json", val), "")
			}
			f.format = val
		case "detail":
			if val != review.DetailFull && val != review.DetailSummary {
				err = reviewError(review.CodeUsage, fmt.Sprintf("--detail %q: want full or summary", val), "")
			}
			f.o.Detail = val
		case "out":
			if val == "" {
				err = reviewError(review.CodeUsage, "--out is empty", "use - for stdout")
			}
			f.out = val
		case "validate":
			f.steps = append(f.steps, step{cmd: val})
		case "validation":
			f.steps = append(f.steps, step{name: val})
		case "config":
			f.config = val
		case "timeout":
			f.timeout, err = reviewMillis(name, val)
		case "budget":
			f.o.TotalBudget, err = reviewMillis(name, val)
		case "git-timeout":
			f.o.GitTimeout, err = reviewMillis(name, val)
		case "max-output-bytes":
			f.o.MaxOutputBytes, err = reviewCount(name, val, 64)
		case "max-total-output-bytes":
			f.o.MaxTotalOutputBytes, err = reviewCount(name, val, 64)
		case "max-files":
			f.o.MaxFiles, err = reviewCount(name, val, 1)
		}
		return err
	})
	if e, ok := errs.As(err); ok && e.Code == errs.Usage {
		// The shared parser's usage error, in review's own codes.
		return nil, reviewError(review.CodeUsage, e.Msg, e.Hint)
	}
	if err != nil {
		return nil, err
	}
	if len(ops) > 0 {
		return nil, reviewError(review.CodeUsage, fmt.Sprintf("unexpected argument %q", ops[0]), "options start with --; the repository is --repo PATH")
	}
	if f.o.Repo == "" {
		return nil, reviewError(review.CodeUsage, "--repo is required", "e.g. rowkit review --repo .")
	}
	return f, nil
}

func parseReviewScopes(s string) ([]string, error) {
	want := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		switch p = strings.TrimSpace(p); p {
		case review.ScopeCommitted, review.ScopeStaged, review.ScopeUnstaged, review.ScopeUntracked:
			want[p] = true
		case "worktree":
			want[review.ScopeStaged], want[review.ScopeUnstaged], want[review.ScopeUntracked] = true, true, true
		case "all":
			for _, a := range review.AllScopes {
				want[a] = true
			}
		default:
			return nil, reviewError(review.CodeUsage, fmt.Sprintf("--scope %q: unknown scope %q", s, p), "scopes: committed, staged, unstaged, untracked, worktree, all")
		}
	}
	var out []string
	for _, a := range review.AllScopes {
		if want[a] {
			out = append(out, a)
		}
	}
	return out, nil
}

func reviewMillis(name, val string) (time.Duration, error) {
	n, err := reviewCount(name, val, 1)
	return time.Duration(n) * time.Millisecond, err
}

func reviewCount(name, val string, lo int) (int, error) {
	n, err := strconv.Atoi(val)
	if err != nil || n < lo || n > 1<<40 {
		return 0, reviewError(review.CodeUsage, fmt.Sprintf("%s %q: want a whole number of at least %d", name, val, lo), "")
	}
	return n, nil
}

// pathCause is the reason of a failed file operation without the path,
// which the message names itself.
func pathCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeOut writes the report as os.WriteFile does, but opens without
// blocking: a FIFO with no reader fails with ENXIO instead of hanging.
func writeOut(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

package review

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/cli"
)

// Command is rowkit review.
var Command = &cli.Command{
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
  untracked   not in the index, respecting ignore rules
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
  --max-output-bytes N     kept per captured stream, head and tail (default 32768)
  --max-files N            entries listed per scope (default 1000)
  --exit-zero              exit 0 whenever a report was produced
  --debug                  add a stack trace to internal errors

exit codes:
  0   done; nothing failed
  1   done; a validation failed
  2   usage or configuration error (E_USAGE, E_CONFIG, E_VALIDATION_UNKNOWN)
  3   the repository could not be inspected (E_REPO_NOT_FOUND, E_NOT_A_REPO,
      E_UNSAFE_REPOSITORY, E_BARE_REPOSITORY, E_BASE_REF_UNKNOWN,
      E_REPO_EXEC_CONFIG, E_GIT_FAILED)
  4   a time budget ran out (a validation timed out or was skipped, or
      E_GIT_TIMEOUT); an interrupt of rowkit stops validations the same way
  70  internal error (E_INTERNAL)
`,
	Run:  run,
	Fail: fail,
}

// done is how run reports a written report whose exit code is not 0.
type done struct {
	code int
	msg  string
}

func (d *done) Error() string { return d.msg }

func fail(env *cli.Env, err error) int {
	var d *done
	if errors.As(err, &d) {
		if d.msg != "" {
			fmt.Fprintf(env.Stderr, "rowkit review: %s\n", d.msg)
		}
		return d.code
	}
	var e *Error
	if !errors.As(err, &e) {
		err = errorf(CodeInternal, err.Error(), "")
	}
	fmt.Fprintf(env.Stderr, "rowkit review: %v\n", err)
	return ExitCode(nil, err, false)
}

type flags struct {
	o         Options
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

func run(ctx context.Context, env *cli.Env, args []string) (err error) {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	// Validations run in their own process groups, out of reach of the
	// terminal's Ctrl-C: an interrupt is passed on to them (SIGTERM, then
	// SIGKILL) before rowkit ends.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprint(p)
			if f.debug {
				msg += "\n" + string(debug.Stack())
			}
			err = errorf(CodeInternal, msg, "please report this")
		}
	}()
	if err := plan(f); err != nil {
		return err
	}
	r, err := Inspect(ctx, f.o)
	if err != nil {
		return err
	}
	var out []byte
	if f.format == "json" {
		if out, err = r.JSON(); err != nil {
			return errorf(CodeInternal, "encoding the report: "+err.Error(), "")
		}
	} else {
		out = r.Markdown()
	}
	if f.out == "-" {
		_, err = env.Stdout.Write(out)
	} else {
		err = os.WriteFile(f.out, out, 0o644)
	}
	if err != nil {
		return errorf(CodeUsage, fmt.Sprintf("writing the report to %s: %v", f.out, unwrapPath(err)), "")
	}
	code := ExitCode(r, nil, f.exitZero)
	if code == ExitOK {
		return nil
	}
	failed := 0
	for _, v := range r.Validations {
		if v.Status != StatusPassed {
			failed++
		}
	}
	return &done{code: code, msg: fmt.Sprintf("%d of %d validations did not pass", failed, len(r.Validations))}
}

// plan turns --validate and --validation into authorised commands and
// decides which config is read.
func plan(f *flags) error {
	var cfg *Config
	var err error
	repoCfg := filepath.Join(f.o.Repo, RepoConfigName)
	_, statErr := os.Stat(repoCfg)
	switch {
	case f.config != "":
		if cfg, err = LoadConfig(f.config); err != nil {
			return err
		}
		if statErr == nil {
			f.o.Diagnostics = append(f.o.Diagnostics, Diagnostic{Code: "W_REPO_CONFIG_IGNORED", Severity: "warning",
				Message: "the repository's " + RepoConfigName + " was ignored in favour of --config"})
		}
	case f.allowRepo && statErr == nil:
		if cfg, err = LoadConfig(repoCfg); err != nil {
			return err
		}
		f.o.Diagnostics = append(f.o.Diagnostics, Diagnostic{Code: "W_REPO_CONFIG_USED", Severity: "warning",
			Message: "--allow-repo-config: validations come from the repository's own " + RepoConfigName, Hint: "a repository config can run anything; use it only on repositories you trust"})
	case statErr == nil:
		f.o.Diagnostics = append(f.o.Diagnostics, Diagnostic{Code: "W_REPO_CONFIG_IGNORED", Severity: "warning",
			Message: "the repository has a " + RepoConfigName + "; it was not read", Hint: "pass --allow-repo-config to use it, or --config for an operator config"})
	}
	n := 0
	for _, s := range f.steps {
		if s.name == "" {
			argv, err := Tokenize(s.cmd)
			if err != nil {
				return err
			}
			n++
			f.o.Validations = append(f.o.Validations, Planned{ID: fmt.Sprintf("validate:%d", n), Argv: argv, Timeout: f.timeout})
			continue
		}
		if cfg == nil {
			return errorf(CodeValidationName, fmt.Sprintf("--validation %q needs a config", s.name), "pass --config FILE")
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
	f := &flags{format: "markdown", out: "-", timeout: DefaultTimeout}
	f.o.Detail = DetailFull
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(name, "--") || len(name) == 2 {
			if a == "-h" {
				name = "--help"
			} else {
				return nil, errorf(CodeUsage, fmt.Sprintf("unexpected argument %q", a), "options start with --; the repository is --repo PATH")
			}
		}
		boolean := map[string]*bool{"--allow-repo-config": &f.allowRepo, "--allow-repo-exec-config": &f.o.AllowRepoExecConfig,
			"--exit-zero": &f.exitZero, "--debug": &f.debug}
		if name == "--help" {
			return nil, errorf(CodeUsage, "see 'rowkit help review' for the options", "")
		}
		if p, ok := boolean[name]; ok {
			if hasVal {
				return nil, errorf(CodeUsage, name+" takes no value", "")
			}
			*p = true
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, errorf(CodeUsage, name+" needs a value", "")
			}
			i++
			val = args[i]
		}
		repeatable := name == "--validate" || name == "--validation"
		if seen[name] && !repeatable {
			return nil, errorf(CodeUsage, name+" given twice", "")
		}
		seen[name] = true
		var err error
		switch name {
		case "--repo":
			f.o.Repo = val
		case "--base-ref":
			if err := CheckRef(val); err != nil {
				return nil, err
			}
			f.o.BaseRef = val
		case "--scope":
			f.o.Scopes, err = parseScopes(val)
		case "--format":
			if val != "markdown" && val != "json" {
				err = errorf(CodeUsage, fmt.Sprintf("--format %q: want markdown or json", val), "")
			}
			f.format = val
		case "--detail":
			if val != DetailFull && val != DetailSummary {
				err = errorf(CodeUsage, fmt.Sprintf("--detail %q: want full or summary", val), "")
			}
			f.o.Detail = val
		case "--out":
			if val == "" {
				err = errorf(CodeUsage, "--out is empty", "use - for stdout")
			}
			f.out = val
		case "--validate":
			f.steps = append(f.steps, step{cmd: val})
		case "--validation":
			f.steps = append(f.steps, step{name: val})
		case "--config":
			f.config = val
		case "--timeout":
			f.timeout, err = millis(name, val)
		case "--budget":
			f.o.TotalBudget, err = millis(name, val)
		case "--git-timeout":
			f.o.GitTimeout, err = millis(name, val)
		case "--max-output-bytes":
			f.o.MaxOutputBytes, err = count(name, val, 64)
		case "--max-files":
			f.o.MaxFiles, err = count(name, val, 1)
		default:
			err = errorf(CodeUsage, fmt.Sprintf("unknown option %s", name), "see 'rowkit help review'")
		}
		if err != nil {
			return nil, err
		}
	}
	if f.o.Repo == "" {
		return nil, errorf(CodeUsage, "--repo is required", "e.g. rowkit review --repo .")
	}
	return f, nil
}

func parseScopes(s string) ([]string, error) {
	want := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		switch p = strings.TrimSpace(p); p {
		case ScopeCommitted, ScopeStaged, ScopeUnstaged, ScopeUntracked:
			want[p] = true
		case "worktree":
			want[ScopeStaged], want[ScopeUnstaged], want[ScopeUntracked] = true, true, true
		case "all":
			for _, a := range AllScopes {
				want[a] = true
			}
		default:
			return nil, errorf(CodeUsage, fmt.Sprintf("--scope %q: unknown scope %q", s, p), "scopes: committed, staged, unstaged, untracked, worktree, all")
		}
	}
	var out []string
	for _, a := range AllScopes {
		if want[a] {
			out = append(out, a)
		}
	}
	return out, nil
}

func millis(name, val string) (time.Duration, error) {
	n, err := count(name, val, 1)
	return time.Duration(n) * time.Millisecond, err
}

func count(name, val string, lo int) (int, error) {
	n, err := strconv.Atoi(val)
	if err != nil || n < lo || n > 1<<40 {
		return 0, errorf(CodeUsage, fmt.Sprintf("%s %q: want a whole number of at least %d", name, val, lo), "")
	}
	return n, nil
}

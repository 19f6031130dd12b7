package grep

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/proc"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Error codes of hgrep for ripgrep itself.
const (
	CodeRgMissing      = "rg_missing"
	CodeInvalidPattern = "invalid_pattern"
	CodeRg             = "rg_failed"
	CodeCancelled      = errs.Cancelled
	CodeTooLarge       = errs.TooLarge
	CodeWrite          = errs.Write
)

const (
	// rgMemory bounds ripgrep's address space. hgrep takes events of up
	// to maxEvent (64 MiB), each built whole in ripgrep's memory with the
	// line it reports, and ripgrep's threads each hold a line; a 700 MB
	// file still searches within half of it (ripgrep does not need to map
	// whole files). Without a bound, one 200 MB line of matches grew
	// ripgrep to about 10 GB before hgrep could refuse the event.
	rgMemory = 1 << 30
	// maxStderr bounds what is kept of ripgrep's diagnostics; a pipe read
	// is at most half of it, so the first messages are always kept.
	maxStderr = 64 << 10
	// killDelay is how long ripgrep gets after SIGTERM before SIGKILL.
	killDelay = time.Second
)

// envAllow is the environment ripgrep keeps: where to find programs and the
// user's global git ignore file. RIPGREP_CONFIG_PATH never passes (and
// --no-config would ignore it anyway).
var envAllow = []string{"PATH", "HOME", "XDG_CONFIG_HOME"}

// confinedArgs are the ripgrep options a confined search adds after all
// others.
var confinedArgs = []string{"--no-ignore-messages"}

// Config says where a search runs.
type Config struct {
	// Root confines the search: every path and file-valued option is
	// resolved inside it (a path leading out is refused with
	// outside_workspace), ripgrep runs in it, -L/--follow is refused (a
	// link could lead out), and every reported file is opened through the
	// root, so that nothing outside it is ever shown. Nil: unconfined.
	Root *workspace.Root
	// Dir is the working directory of an unconfined search: the base of
	// relative paths. Ignored with a Root.
	Dir string
	// LookupEnv finds the caller's environment variables: ripgrep keeps
	// PATH, HOME and XDG_CONFIG_HOME of it and is found on its PATH. Nil
	// is an empty environment, in which rg is not found.
	LookupEnv func(key string) (string, bool)
	// Budget is the budget of the sink, which bounds the longest row worth
	// reading. Zero: DefaultBudget.
	Budget rows.Budget
	// Grouped makes Collect admit the rows as GroupedText prints them
	// (each file's path once) rather than as hgrep does.
	Grouped bool
}

// Result is what a search found, for programs (the MCP search tool) and
// for the CLI's exit status.
type Result struct {
	// Rows are the rows a Collector kept; Search leaves them to its sink.
	Rows []rows.Record `json:"rows" jsonschema:"the verified rows found, in ripgrep's order, each once"`
	// Complete is true when Rows hold every row of the whole search.
	Complete bool `json:"complete" jsonschema:"true when rows hold every row of the whole search"`
	// Incomplete says why not, when Complete is false.
	Incomplete *Reason `json:"incomplete,omitempty" jsonschema:"why the result is not the whole search"`
	// Skipped are paths left out of the search, each with why.
	Skipped []string `json:"skipped,omitempty" jsonschema:"paths left out of the search, each with the reason"`
}

// Reason is a coded explanation of an incomplete result.
type Reason struct {
	Code    string `json:"code" jsonschema:"output_incomplete (the token budget was reached), not_utf8 (a path was skipped), not_found or permission_denied (a named path ripgrep could not open) or rg_failed (ripgrep could not search a path)"`
	Message string `json:"message" jsonschema:"one line of explanation"`
}

// Err returns the result's incompleteness as an error (nil when complete),
// as the CLI reports it.
func (r *Result) Err() error {
	if r == nil || r.Incomplete == nil {
		return nil
	}
	return errs.New(r.Incomplete.Code, r.Incomplete.Message)
}

func budget(b rows.Budget) rows.Budget {
	if b == (rows.Budget{}) {
		return rows.DefaultBudget
	}
	return b
}

// Collect runs the search with a Collector under cfg's budget and returns
// the rows it kept in the result.
func Collect(ctx context.Context, plan *Plan, cfg Config) (*Result, error) {
	c := rows.NewCollector(budget(cfg.Budget))
	if cfg.Grouped {
		c = rows.NewGroupedCollector(budget(cfg.Budget), plan.Before+plan.After > 0)
	}
	res, err := Search(ctx, plan, cfg, c)
	if res != nil {
		res.Rows = c.Records
		if res.Rows == nil {
			res.Rows = []rows.Record{}
		}
	}
	return res, err
}

// Search runs ripgrep with plan and pushes each first-seen verified row of
// its results to sink, in ripgrep's order, until the sink is full.
//
// A search that ran returns a Result: complete, or incomplete with the
// reason (the sink was full, a path was skipped, ripgrep could not search
// a path), the rows found so far already pushed. A search that could not
// run or could not verify a row returns a coded error (usage,
// outside_workspace, not_regular, rg_missing, invalid_pattern, not_utf8,
// changed, read, too_large, write, cancelled). ripgrep never outlives
// Search: on any early return its process group is stopped and reaped.
func Search(ctx context.Context, plan *Plan, cfg Config, sink rows.Sink) (*Result, error) {
	b := budget(cfg.Budget)
	dir := cfg.Dir
	open := func(p string) (*os.File, error) {
		name := p
		if !strings.HasPrefix(p, "/") {
			// Not filepath.Join: cleaning "link/../x" could name another file.
			name = dir + "/" + p
		}
		f, _, err := regfile.Open(os.Stat, os.OpenFile, name)
		return f, err
	}
	var root *os.Root
	if cfg.Root != nil {
		if plan.Follow {
			return nil, errs.Usagef("-L/--follow is refused in a confined search: a link could lead out of the workspace")
		}
		// The root as it was opened, whatever its path names now: rg
		// runs in it through /proc/self/fd.
		dir = cfg.Root.ProcDir()
		root = cfg.Root.FS()
		open = func(p string) (*os.File, error) {
			f, _, err := regfile.Open(root.Stat, root.OpenFile, p)
			if err != nil && strings.Contains(err.Error(), "escapes") {
				return nil, errs.Errorf(errs.Outside, "%s leads outside the workspace", quote(p))
			}
			return f, err
		}
	}
	if dir == "" {
		return nil, errs.Errorf(CodeRead, "the search has no working directory")
	}
	var own []string
	if cfg.Root != nil {
		// ripgrep opens the ignore files it meets (.gitignore, .ignore,
		// .rgignore, info/exclude of the git directory a .git file names)
		// by path, following links, and its message about a malformed one
		// quotes the line: one linked out of the root would show the
		// outside file's lines. The last of --ignore-messages and
		// --no-ignore-messages wins.
		own = confinedArgs
	}
	// Every regular file named to ripgrep (paths, -f, --ignore-file) is
	// the file checked here, handed over open as /dev/fd/N; alias maps
	// those names back to the paths ripgrep would have reported, and held
	// lets the rows of a named file be read from that same file.
	var pinned []*os.File
	alias := map[string]string{}
	held := map[string]*os.File{}
	defer func() {
		for _, f := range pinned {
			f.Close()
		}
	}()
	check := func(p string, isPath bool) (string, error) {
		arg, err := checkPath(cfg.Root, dir, p, isPath)
		if err != nil {
			return "", err
		}
		f, err := pin(root, dir, arg, p, isPath)
		if err != nil || f == nil {
			return arg, err
		}
		fd := "/dev/fd/" + strconv.Itoa(3+len(pinned))
		pinned = append(pinned, f)
		alias[fd] = arg
		if isPath {
			held[arg] = f
		}
		return fd, nil
	}
	args, err := plan.args(func(p string) (string, error) { return check(p, false) },
		func(p string) (string, error) { return check(p, true) }, own...)
	if err != nil {
		return nil, err
	}
	openPath := open
	open = func(p string) (*os.File, error) {
		if f := held[p]; f != nil {
			return reopen(f)
		}
		return openPath(p)
	}

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	stderr := &proc.Limit{Max: maxStderr}
	p, err := proc.Start(ctx, proc.Spec{Path: "rg", Args: args, Dir: dir, Env: proc.Env(cfg.LookupEnv, envAllow), Stderr: stderr, Grace: killDelay,
		ExtraFiles: pinned, MaxMemory: rgMemory})
	if errors.Is(err, proc.ErrNotFound) {
		return nil, errs.Errorf(CodeRgMissing, "ripgrep (rg) is not on PATH; install it (e.g. apt-get install ripgrep)")
	}
	if err != nil {
		return nil, errs.Errorf(CodeRg, "cannot start ripgrep: %v", regfile.Cause(err))
	}
	st := newStream(func(path string) (*os.File, error) {
		f, err := open(path)
		if e, ok := errs.As(err); ok {
			return nil, e
		}
		return f, err
	}, sink, b.MaxRowBytes(), plan.Before, plan.After)
	st.alias = alias
	streamErr := st.run(bufio.NewReaderSize(p.Stdout, 256<<10))
	if streamErr != nil {
		st.close()
		p.Stop() // ripgrep may still be writing: end it before waiting
	}
	res := p.Wait()
	result := &Result{Complete: true}
	if len(st.skips) > 0 {
		result.Skipped = st.skips
	}
	switch {
	case st.full:
		result.Complete = false
		result.Incomplete = &Reason{Code: errs.Incomplete, Message: rows.Incomplete(sink).Msg}
		return result, nil
	case ctx.Err() != nil:
		return result, errs.Errorf(CodeCancelled, "the search was cancelled")
	case bytes.Contains(stderr.Bytes(), []byte("memory allocation of")):
		// ripgrep builds each JSON event whole: one line with many
		// matches (20 MB of "a" searched for "a") needs over 50 times
		// the line.
		return result, errs.Errorf(CodeTooLarge, "ripgrep ran out of its %d MiB of memory on a line with too much match data; narrow the search", rgMemory>>20)
	case streamErr != nil:
		return result, streamErr
	case res.Stopped:
		return result, errs.Errorf(CodeCancelled, "the search was cancelled")
	}
	switch {
	case res.Exit == 0 || res.Exit == 1:
	case res.Exit == 2:
		msg := stderr.Bytes()
		if cfg.Root != nil {
			msg = redactIgnoreErrors(msg)
		}
		for fd, arg := range alias {
			msg = bytes.ReplaceAll(msg, []byte(fd+":"), []byte(arg+":"))
		}
		e := rgError(msg)
		if e.Code == CodeInvalidPattern {
			return result, e
		}
		result.Complete = false
		result.Incomplete = &Reason{Code: e.Code, Message: e.Msg}
		return result, nil
	case res.Signal != "":
		return result, errs.Errorf(CodeRg, "ripgrep was killed (%s)", res.Signal)
	default:
		return result, errs.Errorf(CodeRg, "ripgrep failed (exit status %d)", res.Exit)
	}
	if len(st.skips) > 0 {
		result.Complete = false
		n := len(st.skips)
		msg := "skipped " + st.skips[0]
		if n > 1 {
			msg = "skipped " + strings.Join(st.skips[:min(3, n)], ", ")
		}
		if n > 3 {
			msg += " and " + strconv.Itoa(n-3) + " more"
		}
		result.Incomplete = &Reason{Code: CodeNotUTF8, Message: msg + "; the rest was searched"}
	}
	return result, nil
}

// ignoreError is ripgrep's message about a malformed line of an ignore
// file: the file, the line number, then the line quoted. Compiled on first
// use, not at the start of every rowkit process.
var ignoreError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(.*: line [0-9]+: )error parsing glob '.*$`)
})

// redactIgnoreErrors drops the quoted line from ripgrep's messages about
// malformed ignore files. ripgrep reports those of the parent directories
// of a path it is given whatever --no-ignore-messages says, and it opens
// ignore files through links: in a confined search the file may lie
// outside the root, and its lines must not be shown.
func redactIgnoreErrors(stderr []byte) []byte {
	return ignoreError().ReplaceAll(stderr, []byte("${1}malformed ignore rule"))
}

// rgError condenses ripgrep's diagnostics to one line: its own message
// without usage blocks, hints about flags hgrep does not take, or the
// caret drawings of regex errors. Control characters that ripgrep prints
// as they are in file names are escaped.
func rgError(stderr []byte) *errs.Error {
	var msgs []string
	lines := strings.Split(string(stderr), "\n")
	inUsage := false
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if inUsage && (l == "" || strings.HasPrefix(lines[i], " ")) {
			continue // clap's usage block: indented lines
		}
		inUsage = false
		switch {
		case l == "" || strings.Contains(l, "--debug") || strings.HasPrefix(l, "For more information"):
			continue
		case l == "USAGE:":
			inUsage = true
			continue
		case l == "regex parse error:":
			// The pattern, a caret line, then "error: WHAT".
			var pattern, what string
			for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "error:") {
				i++
				if pattern == "" {
					pattern = strings.TrimSpace(lines[i])
				}
			}
			if i+1 < len(lines) {
				i++
				what = strings.TrimSpace(strings.TrimPrefix(lines[i], "error:"))
			}
			return errs.Errorf(CodeInvalidPattern, "regex parse error: %s in %s", printable(what), printable(pattern))
		}
		msgs = append(msgs, printable(strings.TrimPrefix(strings.TrimPrefix(l, "error: "), "rg: ")))
	}
	if len(msgs) == 0 {
		return errs.Errorf(CodeRg, "ripgrep failed without a message (exit status 2)")
	}
	code := CodeRg
	if m := msgs[0]; strings.HasPrefix(m, "PCRE2: error compiling") || strings.HasPrefix(m, "Compiled regex exceeds size limit") {
		code = CodeInvalidPattern
	} else if c := osErrorCode(msgs); c != "" {
		code = c
	}
	msg := strings.Join(msgs[:min(3, len(msgs))], "; ")
	if len(msgs) > 3 {
		msg += " (and more)"
	}
	return errs.New(code, msg)
}

// osErrorCode is the shared code of a failure every message of which is
// the same operating-system error on a named path (ripgrep's "PATH: No
// such file or directory (os error 2)"), so that a missing path is
// not_found in hgrep as in every other command; "" for anything else.
func osErrorCode(msgs []string) string {
	code := ""
	for _, m := range msgs {
		var c string
		switch {
		case strings.HasSuffix(m, " (os error 2)"):
			c = errs.NotFound
		case strings.HasSuffix(m, " (os error 13)"):
			c = errs.PermissionDenied
		default:
			return ""
		}
		if code != "" && c != code {
			return ""
		}
		code = c
	}
	return code
}

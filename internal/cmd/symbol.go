package cmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/regfile"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/spool"
	"github.com/rowkit/rowkit/internal/symbol"
	"github.com/rowkit/rowkit/internal/workspace"
)

// Symbol is hsymbol as a rowkit command.
var Symbol = &cli.Command{
	Name:    "symbol",
	Aliases: []string{"hsymbol"},
	Usage:   "hsymbol [OPTIONS] OP PATH ROW SYMBOL [N] | hsymbol [OPTIONS] find QUERY [PATH ...]",
	Summary: "go to definition, find references and symbols through the language servers; every answer a verified row",
	Help:    symbolHelp,
	Exits: []cli.Exit{
		{Status: 0, When: "a whole answer (none is an empty answer)"},
		{Status: 1, When: "failure: not_found, not_regular, not_utf8, read, outside_workspace, row_stale and row_missing (the current rows are on stdout), symbol_missing, unsupported (no server for the file, or the server lacks the operation), server_missing (with the install command), server_failed, server_crashed, server_timeout, changed, broker_failed, cancelled, write; or an answer that is not whole, its rows kept: index_incomplete (the server had not finished indexing by the deadline), output_incomplete (token limit or output bound)"},
		{Status: 2, When: "usage: an unknown operation or option, a missing or extra operand, a ROW that is neither LINE:HASH nor LINE, a SYMBOL that occurs more than once on the row without N, a bad --wait, a --max-output or ROWKIT_MAX_OUTPUT that is not a number of bytes"},
	},
	Run:     runSymbol,
	Signals: []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP},
}

var symbolHelp = `Asks the language server of the file's language (gopls for Go, pyright for
Python, TypeScript 7's server for TypeScript and JavaScript) and prints its
answer as verified rows "PATH":LINE:HASH TEXT, each row once, ready to read
on with hread or to edit with hpatch.

  hsymbol def PATH ROW SYMBOL [N]        the definition
  hsymbol refs PATH ROW SYMBOL [N]       every reference, declaration included
  hsymbol impl PATH ROW SYMBOL [N]       implementations (of an interface, a method)
  hsymbol typedef PATH ROW SYMBOL [N]    the definition of its type
  hsymbol hover PATH ROW SYMBOL [N]      signature and documentation
  hsymbol calls-in PATH ROW SYMBOL [N]   who calls it (one level)
  hsymbol calls-out PATH ROW SYMBOL [N]  what it calls (one level)
  hsymbol find QUERY [PATH ...]          workspace symbols matching QUERY: exact
                                         names first, then by path and line

ROW is a verified row LINE:HASH, checked first: a stale row is refused
(row_stale) with the current rows around it on stdout. A bare LINE is taken
as the line is now, and its identity is echoed on stderr. SYMBOL is the
name exactly as it is written on that row; when it occurs more than once
there, N (1, 2, ...) picks the occurrence. PATH is relative to the current
directory, which is the workspace: paths print relative to it.

Order: definitions first, then the rest by path and line. A definition that
inspect_file outlines prints as its whole span, "PATH":ROW..ROW KIND NAME,
before its first row. Calls print each caller (callee) as such a span, then
the rows of the calls. Files outside the workspace (the standard library,
node_modules, the module cache) print once each, without rows:
"PATH" (outside the workspace: N locations).

An answer is whole only once the server said its index is ready and it
stayed alive to answer. Until then hsymbol waits, up to --wait; then it
prints what the server gave and ends with index_incomplete (exit 1). A
server that dies is server_crashed, never an empty answer; a file shown
that changed during the query is changed. The servers' own output never
reaches stdout or stderr.

Servers are found on PATH, then in the workspace's node_modules/.bin (and
gopls where go install puts it). They are never downloaded; a missing one
is server_missing with the command that installs it. They run in a broker,
one per workspace, started by the first call and ended after 10 minutes
without a query (ROWKIT_SYMBOL_IDLE) or when the workspace is removed; its
socket and log are in $XDG_RUNTIME_DIR/rowkit (else /tmp/rowkit-UID, or
ROWKIT_BROKER_DIR).

Output is bounded as hgrep's: token admission (15,000 o200k tokens, rows
never cut) and the output bound below; an answer cut short keeps its rows
and ends with "hsymbol: output incomplete: ...", naming what was left out
and how to narrow, exit 1. What was left out is kept, as hgrep keeps it:
the line ends with the command that reads it on, hread @out/ID N:.

options:
  --in PATH           refs, impl, calls-in, calls-out: list only locations in
                      files under PATH (repeatable)
  --wait SECONDS      how long to wait for the server's index (default 30)
  --no-broker         answer in this process, with a server started for this
                      call alone (slow: the server loads the workspace)
` + maxOutputHelp

var symbolOptions = []cli.Option{
	maxOutputOption,
	{Long: []string{"in"}, Value: true, Repeat: true},
	{Long: []string{"wait"}, Value: true},
	{Long: []string{"no-broker"}},
	// The broker itself (hidden): rowkit symbol --broker ROOT.
	{Long: []string{"broker"}, Value: true},
}

func runSymbol(ctx context.Context, env *cli.Env, args []string) error {
	maxOut := notGiven
	var in []string
	var wait time.Duration
	noBroker := false
	brokerRoot := ""
	pos, err := cli.Parse("symbol", symbolOptions, args, func(a cli.Arg) (err error) {
		switch a.Long[0] {
		case "max-output":
			maxOut, err = parseMaxOutput(a.Spelled, a.Value)
		case "in":
			in = append(in, a.Value)
		case "wait":
			secs, perr := strconv.ParseFloat(a.Value, 64)
			if perr != nil || secs <= 0 || secs > 3600 {
				return errs.Usagef("--wait %q is not a number of seconds between 0 and 3600", a.Value)
			}
			wait = time.Duration(secs * float64(time.Second))
		case "no-broker":
			noBroker = true
		case "broker":
			brokerRoot = a.Value
		}
		return err
	})
	if err != nil {
		return err
	}
	if brokerRoot != "" {
		return serveBroker(ctx, env, brokerRoot)
	}
	req, err := symbolRequest(pos)
	if err != nil {
		return err
	}
	req.Wait, req.In = wait, in
	root, err := openWorkDir(env)
	if err != nil {
		return err
	}
	if req.Path, err = workspaceRel(root, req.Path); err != nil {
		return err
	}
	for i, p := range req.Paths {
		if req.Paths[i], err = workspaceRel(root, p); err != nil {
			return err
		}
	}
	for i, p := range req.In {
		if req.In[i], err = workspaceRel(root, p); err != nil {
			return err
		}
	}
	if err := req.Check(); err != nil {
		return err
	}
	// The position is checked here, before any broker or server starts:
	// a stale row or an ambiguous symbol costs nothing.
	if req.Op != symbol.OpFind {
		if _, _, err := symbol.Resolve(root, req); err != nil {
			return symbolFailure(env, err)
		}
	}
	bound, err := bounded(env, maxOut)
	if err != nil {
		return err
	}
	// What the bound leaves out is kept (the engine reads it too), and
	// the diagnostic names the command that reads it on: its room is
	// reserved.
	req.Keep = true
	cont := keptContinuation(env.Name)
	contRoom := len(cont(spool.Prefix+strings.Repeat("x", spool.IDLen), 1<<30))
	b := env.Budget()
	if b.MaxBytes > 0 {
		// Room for what the diagnostic adds: what was left out, how to
		// narrow, where it is kept.
		b.Reserve += 120 + contRoom
	}
	var res *symbol.Result
	if noBroker {
		res, err = queryDirect(ctx, env, root, req, b)
	} else {
		br := &symbol.Broker{Env: env.LookupEnv, Executable: env.Executable}
		req.Env = symbol.CallerEnv(env.LookupEnv)
		res, err = br.Query(ctx, root.Dir(), req, b)
	}
	if err != nil {
		return symbolFailure(env, err)
	}
	if _, hash, _ := strings.Cut(req.Row, ":"); req.Op != symbol.OpFind && hash == "" && res.Row != "" {
		// A bare LINE: the identity the answer is about, for the next call.
		line, _, _ := strings.Cut(res.Row, ":")
		io.WriteString(env.Stderr, env.Name+": row "+line+" is "+res.Row+"\n")
	}
	body := symbol.Body(res)
	err = res.Err()
	twoBounds := bound.fail > 0 && bound.fail < bound.ok
	if len(res.Left) > 0 && errs.Is(err, errs.Incomplete) {
		body, err = keepSymbol(env, bound, twoBounds, body, res, cont, contRoom)
	} else if err != nil && twoBounds {
		held := bytes.NewBufferString(body)
		err = cutToFailBound(env, bound, held, err)
		body = held.String()
	}
	if _, werr := io.WriteString(env.Stdout, body); werr != nil {
		return errs.Errorf(errs.Write, "writing output: %v", regfile.Cause(werr))
	}
	return err
}

// keepSymbol keeps an answer the bound cut, the rows shown and the rows
// left out, in the user's store of kept outputs, and returns what to show
// and the diagnostic that names the command reading on from the first row
// left out. Under a failure's narrower bound (Claude Code's) the rows
// shown are cut to it first.
func keepSymbol(env *cli.Env, bound outputBound, twoBounds bool, body string, res *symbol.Result, cont func(string, int) string, contRoom int) (string, error) {
	shown, msg := body, res.Reason.Message
	if twoBounds {
		env.OutputBytes = bound.fail
		fb := env.Budget()
		if len(body)+len(cli.Lines(env.Name, errs.New(errs.Incomplete, msg)))+contRoom > bound.fail {
			room := fb.MaxBytes - fb.Reserve - contRoom
			shown = body[:strings.LastIndexByte(body[:max(min(room, len(body)), 0)], '\n')+1]
			msg = fb.Stopped(true).Msg
		}
	}
	k := &keptRows{env: env}
	w, err := k.open()
	if err != nil {
		return shown, errs.New(errs.Incomplete, msg+spool.NotKept(err, contRoom))
	}
	io.WriteString(w, body)
	w.Write(res.Left)
	if res.LeftCapped {
		k.w.Stop()
	}
	n := strings.Count(shown, "\n")
	return shown, k.commit(errs.New(errs.Incomplete, msg), nil, func(ref string) string { return cont(ref, n+1) })
}

// symbolRequest reads the operands: OP PATH ROW SYMBOL [N], or find QUERY
// [PATH ...].
func symbolRequest(pos []string) (symbol.Request, error) {
	const usage = "usage: hsymbol OP PATH ROW SYMBOL [N], or hsymbol find QUERY [PATH ...]; OP is one of "
	ops := strings.Join(symbol.Ops[:len(symbol.Ops)-1], ", ")
	if len(pos) == 0 {
		return symbol.Request{}, errs.Usagef("missing OP; %s%s", usage, ops)
	}
	r := symbol.Request{Op: pos[0]}
	switch {
	case r.Op == symbol.OpFind:
		if len(pos) < 2 {
			return r, errs.Usagef("find needs a QUERY; usage: hsymbol find QUERY [PATH ...]")
		}
		r.Query, r.Paths = pos[1], pos[2:]
		return r, nil
	case !isOp(r.Op):
		return r, errs.Usagef("unknown operation %s; %s%s", errs.Name(r.Op), usage, ops)
	case len(pos) < 4:
		return r, errs.Usagef("%s needs PATH ROW SYMBOL; usage: hsymbol %s PATH ROW SYMBOL [N]", r.Op, r.Op)
	case len(pos) > 5:
		return r, errs.Usagef("%s takes PATH ROW SYMBOL [N], got %d operands", r.Op, len(pos)-1)
	}
	r.Path, r.Row, r.Symbol = pos[1], pos[2], pos[3]
	if len(pos) == 5 {
		n, err := strconv.Atoi(pos[4])
		if err != nil || n < 1 || strconv.Itoa(n) != pos[4] {
			return r, errs.Usagef("N %s is not a positive number (which occurrence of %s on the row)", errs.Name(pos[4]), errs.Name(r.Symbol))
		}
		r.N = n
	}
	return r, nil
}

func isOp(op string) bool {
	for _, o := range symbol.Ops {
		if o == op {
			return true
		}
	}
	return false
}

// workspaceRel takes an absolute path inside the workspace as the
// relative path it is; others are left to the engine's confinement.
func workspaceRel(root *workspace.Root, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return p, nil
	}
	if workspace.Inside(root.Dir(), p) {
		rel, err := filepath.Rel(root.Dir(), p)
		if err == nil {
			return rel, nil
		}
	}
	return "", errs.Errorf(errs.Outside, "%s is outside the workspace %s (the current directory)", p, root.Dir())
}

// symbolFailure prints the current rows a RowError carries on stdout (as
// hpatch shows its repair rows) and returns the error for its line.
func symbolFailure(env *cli.Env, err error) error {
	var re *symbol.RowError
	if errors.As(err, &re) {
		var b []byte
		for _, r := range re.Context {
			b = rows.AppendRecord(b, r)
		}
		env.Stdout.Write(b)
	}
	return err
}

// queryDirect answers in this process, with servers that end with it.
func queryDirect(ctx context.Context, env *cli.Env, root *workspace.Root, req symbol.Request, b rows.Budget) (*symbol.Result, error) {
	e, err := symbol.Open(root, symbol.Options{LookupEnv: env.LookupEnv})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	return e.Query(ctx, req, b)
}

// serveBroker is rowkit symbol --broker ROOT: the broker of ROOT, run by
// the first call in that workspace (symbol.Broker).
func serveBroker(ctx context.Context, env *cli.Env, root string) error {
	idle := symbol.DefaultBrokerIdle
	if v, ok := lookupEnv(env, symbol.BrokerIdleEnv); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return errs.Usagef("%s %q is not a duration such as 30s or 10m", symbol.BrokerIdleEnv, v)
		}
		idle = d
	}
	return symbol.ServeBroker(ctx, symbol.BrokerOptions{
		Root: root, Idle: idle, Identity: symbol.Identity(env.Executable),
		Engine: symbol.Options{LookupEnv: env.LookupEnv},
	})
}

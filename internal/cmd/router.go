package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/cli"
	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/proc"
	"github.com/rowkit/rowkit/internal/router"
)

const routerUsage = "rowkit router --upstream URL [--listen ADDR] [--passthrough] [--frontend PATH]"

// Router is rowkit router: the Codex router.
var Router = &cli.Command{
	Name:    "router",
	Usage:   routerUsage,
	Summary: "proxy Codex's model API: hpatch and shell in place of apply_patch and exec_command",
	Help: `Listens on ADDR (default 127.0.0.1:8787) for the Codex CLI, whose model
provider's base_url is http://ADDR, and forwards each request to URL plus its
path (--upstream https://api.openai.com/v1). In a Responses request that
streams and offers exec_command, apply_patch and exec_command give way to two
tools: hpatch (an HPATCH/2 script, constrained by a grammar) and shell (a
bash script run by rowkit, with hread, hgrep, inspect_file and hpatch inside);
the passages of Codex's base instructions that name apply_patch and
exec_command give way to rowkit's guidance. A call of either tool reaches
Codex as an exec_command running 'rowkit carrier' on the model's exact text,
so Codex runs it under its own sandbox and approval policy; in every request
the history's carriers become the model's own calls again. Everything else is
forwarded byte for byte, streams event by event. The router reads, writes
and runs nothing itself and keeps no state between requests.

Before it listens it checks that the binary its carriers run is executable
and that ripgrep is on PATH. One JSON line per request goes to stderr:
method, path, status, time, what was rewritten and why not, and checksums of
the bodies (never a body, never a header). SIGINT or SIGTERM stops it.

options:
  --upstream URL    the Responses API base URL (http or https), required
  --listen ADDR     host:port to listen on (default 127.0.0.1:8787); any
                    other than a loopback address exposes the relay, and the
                    credentials Codex sends through it, to that network
  --passthrough     forward everything unchanged (the A/B baseline): no
                    hpatch or shell, no start-up check
  --frontend PATH   the rowkit binary the carriers name, as the commands
                    Codex runs see it (default: this binary)
`,
	Exits: []cli.Exit{
		{Status: 0, When: "stopped by SIGINT or SIGTERM"},
		{Status: 1, When: "a start-up check failed (router_startup: the carrier's binary is missing or not executable, ripgrep is not on PATH) or the address cannot be listened on (listen)"},
		{Status: 2, When: "usage: no --upstream, a URL that is not http or https, an unknown argument, a missing value"},
	},
	Run:     runRouter,
	Signals: []os.Signal{os.Interrupt, syscall.SIGTERM},
}

// shutdownGrace is how long running requests get to finish after a signal.
const shutdownGrace = 5 * time.Second

func runRouter(ctx context.Context, env *cli.Env, args []string) error {
	listen := "127.0.0.1:8787"
	var upstream, frontend, yield string
	passthrough := false
	for i := 0; i < len(args); i++ {
		name, val, has := strings.Cut(args[i], "=")
		switch name {
		case "--passthrough":
			if has {
				return errs.Usagef("--passthrough takes no value; usage: %s", routerUsage)
			}
			passthrough = true
			continue
		case "--upstream", "--listen", "--frontend", "--yield-ms":
		default:
			return errs.Usagef("unknown argument %q; usage: %s", args[i], routerUsage)
		}
		if !has {
			if i+1 >= len(args) {
				return errs.Usagef("%s needs a value; usage: %s", name, routerUsage)
			}
			i++
			val = args[i]
		}
		switch name {
		case "--upstream":
			upstream = val
		case "--listen":
			listen = val
		case "--frontend":
			frontend = val
		case "--yield-ms":
			yield = val
		}
	}
	if upstream == "" {
		return errs.Usagef("--upstream URL is required (e.g. https://api.openai.com/v1); usage: %s", routerUsage)
	}
	up, err := url.Parse(upstream)
	if err != nil || up.Scheme != "http" && up.Scheme != "https" || up.Host == "" || up.RawQuery != "" || up.Fragment != "" {
		return errs.Usagef("--upstream %q is not an http or https base URL such as https://api.openai.com/v1", upstream)
	}
	cfg := router.Config{Upstream: up, Passthrough: passthrough, Log: env.Stderr}
	if !passthrough {
		if frontend == "" {
			if frontend, err = os.Executable(); err == nil {
				frontend, err = filepath.EvalSymlinks(frontend)
			}
			if err != nil {
				return errs.Errorf(router.CodeStartup, "cannot tell where this rowkit binary is (%v); give --frontend PATH", err)
			}
		}
		c, err := router.NewCarrier(frontend)
		if err != nil {
			return err
		}
		if yield != "" {
			// Hidden, for the tests of a call that outlasts its yield:
			// Codex honours 250 to 30,000 ms.
			ms, err := strconv.Atoi(yield)
			if err != nil || ms < 250 || ms > router.YieldMS {
				return errs.Usagef("--yield-ms %q is not a number of milliseconds from 250 to %d", yield, router.YieldMS)
			}
			c = c.WithYield(ms)
		}
		var rgErr error
		rg, found := proc.LookPath("rg", proc.Env(env.LookupEnv, []string{"PATH"}))
		if !found {
			rgErr = proc.ErrNotFound
		}
		if err := router.Preflight(c, rg, rgErr); err != nil {
			return err
		}
		cfg.Carrier = c
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return errs.Errorf("listen", "cannot listen on %s: %v", listen, errors.Unwrap(err))
	}
	addr := ln.Addr().(*net.TCPAddr)
	what := "passthrough: everything forwarded unchanged"
	if !passthrough {
		what = "carriers run " + cfg.Carrier.Frontend()
	}
	fmt.Fprintf(env.Stderr, "rowkit router: listening on http://%s for %s (%s)\n", addr, up.Redacted(), what)
	if !addr.IP.IsLoopback() {
		fmt.Fprintf(env.Stderr, "rowkit router: warning: %s is not a loopback address; anyone who reaches it can use the upstream through this router, with the credentials Codex sends\n", addr)
	}

	srv := &http.Server{Handler: router.NewServer(cfg), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return errs.Errorf("listen", "serving on %s: %v", addr, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	srv.Shutdown(sctx)
	fmt.Fprintln(env.Stderr, "rowkit router: stopped")
	return nil
}

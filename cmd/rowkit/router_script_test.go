package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rowkit/rowkit/internal/router"
)

func init() {
	scriptCmds["carry"] = cmdCarry
	scriptCmds["upstream"] = cmdUpstream
	scriptCmds["freeport"] = cmdFreePort
	scriptCmds["post"] = cmdPost
}

// upstream NAME EVENTS starts a stand-in for the Responses API for the
// rest of the script: it answers every request with the file EVENTS as a
// text/event-stream, writes the body of request N to upstream-N.json and
// its method and URI to upstream-N.uri, and sets $NAME to its base URL.
func cmdUpstream(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: upstream NAME EVENTS")
	}
	events := ts.ReadFile(args[1])
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n++
		name := ts.MkAbs(fmt.Sprintf("upstream-%d", n))
		mu.Unlock()
		os.WriteFile(name+".json", b, 0o644)
		os.WriteFile(name+".uri", []byte(r.Method+" "+r.RequestURI+"\n"), 0o644)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, events)
	}))
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL)
}

// freeport NAME sets $NAME to a TCP port on 127.0.0.1 that was free.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport NAME")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Setenv(args[0], strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	l.Close()
}

// post URL FILE OUT posts FILE to URL as JSON, waiting up to 10 s for the
// server to accept, and writes the status line and the body to OUT.
func cmdPost(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: post URL FILE OUT")
	}
	body := ts.ReadFile(args[1])
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err = http.Post(args[0], "application/json", strings.NewReader(body))
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	ts.Check(err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), append([]byte(resp.Status+"\n"), b...), 0o644))
}

// carry CODE TOOL FILE runs FILE's script as a routed TOOL call reaches
// Codex: the carrier's command, naming the rowkit on PATH, through /bin/sh
// -c, as Codex's exec_command runs it. It checks the exit code; stdout and
// stderr are checked as for exec.
func cmdCarry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: carry CODE TOOL FILE")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	bin, err := exec.LookPath("rowkit")
	ts.Check(err)
	bin, err = filepath.Abs(bin)
	ts.Check(err)
	c, err := router.NewCarrier(bin)
	ts.Check(err)
	cmd, err := c.Command(args[1], ts.ReadFile(args[2]))
	ts.Check(err)
	got := 0
	if err := ts.Exec(router.CarrierShell, "-c", cmd); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("carry: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("the carrier exited %d, want %d", got, want)
	}
}

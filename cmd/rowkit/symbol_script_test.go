package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rowkit/rowkit/internal/symbol/symboltest"
)

func init() {
	scriptSetups = append(scriptSetups, symbolSetup)
	scriptCmds["brokers"] = cmdBrokers
}

// symbolSetup gives every script the language servers (the pinned ones
// scripts/test installs), the go command's caches, and a broker directory
// of its own; the brokers a script started are ended with it.
func symbolSetup(env *testscript.Env) error {
	if err := symboltest.Missing(); err != nil {
		return err
	}
	vars := symboltest.Vars()
	// The commands under test, without any server: for server_missing.
	first, _, _ := strings.Cut(env.Getenv("PATH"), string(filepath.ListSeparator))
	env.Setenv("SERVERLESS_PATH", first+string(filepath.ListSeparator)+"/usr/bin:/bin")
	env.Setenv("PATH", strings.Join(symboltest.Bins(), string(filepath.ListSeparator))+string(filepath.ListSeparator)+env.Getenv("PATH"))
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		env.Setenv(k, vars[k])
	}
	dir := filepath.Join(env.WorkDir, ".brokers")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	env.Setenv("ROWKIT_BROKER_DIR", dir)
	env.Setenv("ROWKIT_SYMBOL_IDLE", "2m")
	env.Defer(func() {
		for _, pid := range brokerPids(dir) {
			syscall.Kill(pid, syscall.SIGTERM)
		}
	})
	return nil
}

// brokerPids are the process ids the brokers in dir wrote in their lock
// files, of those still holding their lock.
func brokerPids(dir string) []int {
	locks, _ := filepath.Glob(filepath.Join(dir, "*.lock"))
	var out []int
	for _, l := range locks {
		f, err := os.Open(l)
		if err != nil {
			continue
		}
		held := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
		f.Close()
		b, _ := os.ReadFile(l)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && held {
			out = append(out, pid)
		}
	}
	return out
}

// brokers N checks that N brokers hold their lock in the script's broker
// directory.
func cmdBrokers(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: brokers N")
	}
	want, _ := strconv.Atoi(args[0])
	if got := len(brokerPids(ts.Getenv("ROWKIT_BROKER_DIR"))); got != want {
		ts.Fatalf("%d brokers, want %d", got, want)
	}
}

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	scriptCmds["readdenied"] = cmdReadDenied
}

// readdenied FILE runs rowkit read on a copy of FILE that its user may not
// read (mode 000; as the user nobody when the test runs as root) and
// checks the exit code 1, PERMISSION_DENIED on stderr and the json result
// on stdout.
func cmdReadDenied(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: readdenied FILE")
	}
	bin, err := exec.LookPath("rowkit")
	ts.Check(err)
	dir, err := os.MkdirTemp("", "rowkit-readdenied")
	ts.Check(err)
	ts.Defer(func() { os.RemoveAll(dir) })
	ts.Check(os.Chmod(dir, 0o755))
	exe := filepath.Join(dir, "rowkit")
	ts.Check(os.Link(bin, exe)) // a link, not a copy: see cmdDenied
	ts.Check(os.Chmod(exe, 0o755))
	ts.Check(os.WriteFile(filepath.Join(dir, "secret.txt"), []byte(ts.ReadFile(args[0])), 0o000))
	cmd := exec.Command(exe, "read", "--root", dir, "--format", "json", "secret.txt")
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	ee, ok := err.(*exec.ExitError)
	want := `{"tool":"read","status":"error","error":{"code":"PERMISSION_DENIED","phase":"open","message":"secret.txt: permission denied"},"request":{"path":"secret.txt","offset":1,"limit":2000,"ranged":false},"file":null,"notes":[{"code":"permission-denied","severity":"warning","message":"secret.txt: permission denied"}]}` + "\n"
	if !ok || ee.ExitCode() != 1 || stdout.String() != want || stderr.String() != "rowkit read: PERMISSION_DENIED: secret.txt: permission denied\n" {
		ts.Fatalf("want exit 1 and PERMISSION_DENIED; got %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
}

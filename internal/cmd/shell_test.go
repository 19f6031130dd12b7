package cmd

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rowkit/rowkit/internal/cli"
)

// shellEnviron is this process's environment with a home and TMPDIR of
// the test's own: the login profile a shell runs is the home's (none).
func shellEnviron(t *testing.T) []string {
	return append(os.Environ(), "HOME="+t.TempDir(), "TMPDIR="+t.TempDir())
}

// shellCall runs rowkit shell in dir, this test binary being rowkit (its
// commands on the script's PATH, its guardian), in shellEnviron.
func shellCall(t *testing.T, dir string, args ...string) cli.Output {
	environ := shellEnviron(t)
	env := cli.Env{Dir: dir, Stdin: strings.NewReader(""), Executable: "/proc/self/exe",
		LookupEnv: func(k string) (string, bool) {
			for i := len(environ) - 1; i >= 0; i-- {
				if v, ok := strings.CutPrefix(environ[i], k+"="); ok {
					return v, true
				}
			}
			return "", false
		},
		Environ: func() []string { return environ },
	}
	return cli.Call(context.Background(), env, All, append([]string{"rowkit", "shell"}, args...)...)
}

// hread, hgrep, inspect_file and hpatch run at once in the stages of one
// pipeline and in pipelines beside each other; each writes what it writes
// when it runs alone.
func TestShellPrivateCommandsConcurrently(t *testing.T) {
	dir, text := bigFiles(t)
	lines := strings.Split(text, "\n")
	writeFiles(t, dir, map[string]string{"s.hp": "in big.txt\ntype " + strings.Fields(row(3, lines[2]))[0] + " \"changed\"\n"})
	script := `for i in 1 2 3 4; do
  { hread big.txt; rowkit hread big.txt 1:10; } | { hgrep -F needle big.txt > g$i; cat > r$i; } &
  inspect_file p.go | { hpatch --dry-run < s.hp > d$i; rowkit grep -F 'Function007(' p.go > f$i; cat > i$i; } &
done
wait`
	out := shellCall(t, dir, "-c", script)
	if out.Code != 0 || len(out.Stdout)+len(out.Stderr) != 0 {
		t.Fatalf("exit %d, %s %s", out.Code, out.Stdout, out.Stderr)
	}
	alone := func(argv ...string) string {
		o := call(dir, 0, "", argv...)
		if o.Code != 0 {
			t.Fatalf("%q: exit %d %s", argv, o.Code, o.Stderr)
		}
		return string(o.Stdout)
	}
	dry := call(dir, 0, "in big.txt\ntype "+strings.Fields(row(3, lines[2]))[0]+" \"changed\"\n", "hpatch", "--dry-run")
	want := map[string]string{
		"r": alone("hread", "big.txt") + alone("hread", "big.txt", "1:10"),
		"g": alone("hgrep", "-F", "needle", "big.txt"),
		"i": alone("inspect_file", "p.go"),
		"d": string(dry.Stdout),
		"f": alone("hgrep", "-F", "Function007(", "p.go"),
	}
	if !strings.Contains(want["d"], "+changed\n") || !strings.Contains(want["f"], `func Function007()`) {
		t.Fatalf("the references are not what they should be: %q %q", want["d"], want["f"])
	}
	for i := 1; i <= 4; i++ {
		for k, w := range want {
			got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s%d", k, i)))
			if err != nil || string(got) != w {
				t.Errorf("%s%d: %v\n%.300s\nwant\n%.300s", k, i, err, got, w)
			}
		}
	}
}

// cd in the script moves the private commands: paths are relative to the
// script's directory and reported as given.
func TestShellCd(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"sub/f.txt": "alpha\nx marks\n", "f.txt": "top\n"})
	out := shellCall(t, dir, "-c", `cd sub && hread f.txt && hgrep x && inspect_file f.txt >/dev/null && hread missing.txt`)
	want := rowsOf("alpha\nx marks\n") + `"f.txt":` + row(2, "x marks")
	if out.Code != 1 || string(out.Stdout) != want || string(out.Stderr) != "hread: not_found: missing.txt: no such file\n" {
		t.Errorf("exit %d\n%s\n%s", out.Code, out.Stdout, out.Stderr)
	}
}

// The directory on the script's PATH holds exactly rowkit and the shell
// names of the command table, as rowkit link makes them: a command added
// to All with an alias is there too.
func TestShellNamesFromTheTable(t *testing.T) {
	out := shellCall(t, t.TempDir(), "-c", `ls "${PATH%%:*}"`)
	got := strings.Fields(string(out.Stdout))
	want := append([]string{"rowkit"}, cli.Names(All)...)
	slices.Sort(want)
	if out.Code != 0 || !slices.Equal(got, want) || !slices.Equal(ShellNames(), append([]string{"rowkit"}, cli.Names(All)...)) {
		t.Errorf("exit %d: %q, want %q (%s)", out.Code, got, want, out.Stderr)
	}
}

// Under a bound, a private command gets the room before the note in
// ROWKIT_MAX_OUTPUT: a whole prefix of rows and its diagnostic, in place,
// no note; in a pipe too, as under any agent's shell.
func TestShellPrivateCommandCeiling(t *testing.T) {
	dir, text := bigFiles(t)
	full := rowsOf(text)
	for _, script := range []string{"hread big.txt", "hread big.txt 2>&1 | cat; exit ${PIPESTATUS[0]}"} {
		out := shellCall(t, dir, "--max-output", "2000", "-c", script)
		m := regexp.MustCompile(`(?s)^(.*\n)hread: output incomplete: ([0-9,]+)-byte output limit reached; continue with: hread big.txt [0-9]+:\n$`).FindSubmatch(out.Stdout)
		if out.Code != 1 || m == nil || len(out.Stdout) > 2000 || !strings.HasPrefix(full, string(m[1])) || len(m[1]) < 1000 || len(out.Stderr) != 0 {
			t.Errorf("%s: exit %d, %d bytes:\n%s", script, out.Code, len(out.Stdout), out.Stdout)
		}
	}
}

// Without bash on PATH there is no shell: a clear error naming what to
// install, exit 127, nothing run; the carrier says the same.
func TestShellWithoutBash(t *testing.T) {
	dir := t.TempDir()
	env := cli.Env{Dir: dir, Stdin: strings.NewReader("touch ran\n"), Executable: "/proc/self/exe",
		LookupEnv: func(k string) (string, bool) {
			if k == "PATH" {
				return dir, true
			}
			return "", false
		},
		Environ: func() []string { return []string{"PATH=" + dir} },
	}
	for _, argv := range [][]string{{"rowkit", "shell", "-c", "touch ran"}, {"rowkit", "carrier", "shell"}} {
		out := cli.Call(context.Background(), env, All, argv...)
		want := fmt.Sprintf("rowkit %s: bash_missing: bash is not on PATH (%s): rowkit shell runs scripts with the system's bash; install it (Debian, Ubuntu: apt-get install bash; Fedora: dnf install bash; Alpine: apk add bash)\n", argv[1], dir)
		if out.Code != 127 || string(out.Stderr) != want || len(out.Stdout) != 0 {
			t.Errorf("%q: exit %d, %q %q", argv, out.Code, out.Stdout, out.Stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("something ran")
	}
}

// Many shells starting at once, each a process, with a TMPDIR where the
// directory of rowkit's commands does not exist yet: every one of them
// runs its script with the commands, and one directory is made.
func TestShellsStartAtOnce(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, environ := t.TempDir(), shellEnviron(t)
	tmp := environ[len(environ)-1][len("TMPDIR="):]
	writeFiles(t, dir, map[string]string{"f.txt": "alpha\nbeta\n"})
	const n = 24
	var wg sync.WaitGroup
	outs := make([][]byte, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := exec.Command(self, "shell", "-c", "hread f.txt 2:2; hgrep -F alpha f.txt")
			c.Args[0] = "rowkit"
			c.Dir, c.Env = dir, environ
			<-start
			outs[i], errs[i] = c.CombinedOutput()
		}()
	}
	close(start)
	wg.Wait()
	want := row(2, "beta") + `"f.txt":` + row(1, "alpha")
	for i := range n {
		if errs[i] != nil || string(outs[i]) != want {
			t.Errorf("shell %d: %v, %q", i, errs[i], outs[i])
		}
	}
	made, _ := filepath.Glob(filepath.Join(tmp, "rowkit-*", "*"))
	if len(made) != 1 || !strings.Contains(made[0], "/shell-") {
		t.Errorf("made %q, want one directory", made)
	}
}

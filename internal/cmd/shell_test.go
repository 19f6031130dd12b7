package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/cli"
)

// shellCall runs rowkit shell in-process in dir: the real private commands,
// as a script runs them.
func shellCall(dir string, args ...string) cli.Output {
	env := cli.Env{Dir: dir, LookupEnv: os.LookupEnv, Environ: os.Environ, Stdin: strings.NewReader("")}
	return cli.Call(context.Background(), env, All, append([]string{"rowkit", "shell"}, args...)...)
}

// hread, hgrep, inspect_file and hpatch run at once in the stages of one
// pipeline and in pipelines beside each other, each stage a goroutine of
// this process; each writes what it writes when it runs alone. Run it with
// -race.
func TestShellPrivateCommandsConcurrently(t *testing.T) {
	dir, text := bigFiles(t)
	lines := strings.Split(text, "\n")
	writeFiles(t, dir, map[string]string{"s.hp": "in big.txt\ntype " + strings.Fields(row(3, lines[2]))[0] + " \"changed\"\n"})
	script := `for i in 1 2 3 4; do
  { hread big.txt; rowkit hread big.txt 1:10; } | { hgrep -F needle big.txt > g$i; cat > r$i; } &
  inspect_file p.go | { hpatch --dry-run < s.hp > d$i; rowkit grep -F 'Function007(' p.go > f$i; cat > i$i; } &
done
wait`
	out := shellCall(dir, "-c", script)
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
	out := shellCall(dir, "-c", `cd sub && hread f.txt && hgrep x && inspect_file f.txt >/dev/null && hread missing.txt`)
	want := rowsOf("alpha\nx marks\n") + `"f.txt":` + row(2, "x marks")
	if out.Code != 1 || string(out.Stdout) != want || string(out.Stderr) != "hread: not_found: missing.txt: no such file\n" {
		t.Errorf("exit %d\n%s\n%s", out.Code, out.Stdout, out.Stderr)
	}
}

// On the shell's bounded output a private command gets the room left as
// its byte ceiling: a whole prefix of rows and its diagnostic, in place,
// no note. In a pipe it keeps the token rule: its whole output goes into
// the pipe, and the shell's bound cuts what comes out with its note.
func TestShellPrivateCommandCeiling(t *testing.T) {
	dir, text := bigFiles(t)
	full := rowsOf(text)
	out := shellCall(dir, "--max-output", "2000", "-c", "hread big.txt")
	m := regexp.MustCompile(`(?s)^(.*\n)hread: output incomplete: ([0-9,]+)-byte output limit reached; continue with: hread big.txt [0-9]+:\n$`).FindSubmatch(out.Stdout)
	if out.Code != 1 || m == nil || len(out.Stdout) > 2000 || !strings.HasPrefix(full, string(m[1])) || len(m[1]) < 1000 || len(out.Stderr) != 0 {
		t.Errorf("on the output: exit %d, %d bytes:\n%s", out.Code, len(out.Stdout), out.Stdout)
	}
	out = shellCall(dir, "--max-output", "2000", "-c", "hread big.txt | cat; echo \"st=${?}\"")
	if out.Code != 0 || len(out.Stdout) > 2000 || !bytes.Contains(out.Stdout, []byte(" left out here; the last ")) ||
		!bytes.HasSuffix(out.Stdout, []byte(row(600, strings.Split(text, "\n")[599])+"st=0\n")) || bytes.Contains(out.Stdout, []byte("incomplete")) {
		t.Errorf("in a pipe: exit %d, %d bytes:\n%s", out.Code, len(out.Stdout), out.Stdout)
	}
}

// Command replay replays a repository's history through hpatch: for each
// of the last N non-merge commits it writes the parent's touched text files
// into a scratch workspace, expresses the commit as one HPATCH/2 script
// addressed by the parent's verified rows (written the way a careful agent
// would: a changed word inside a line is a text target), applies it with
// the patch engine and requires every touched file to equal the commit's
// version byte for byte. It also expresses each commit as a Codex
// apply_patch envelope (three lines of context) and counts the o200k
// tokens of both, and of the read each needs first.
//
//	go run ./bench/replay [-repo DIR] [-n 300] [-v]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/rowkit/rowkit/internal/patch"
	"github.com/rowkit/rowkit/internal/proc"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

type stats struct {
	commits, files, exact, mismatched, rejected, inexpressible, binary int
	hpTok, apTok                                                       int
	modCommits, modHpTok, modApTok                                     int
	readRowsTok, readNumTok                                            int
	textTargets, rowTargets                                            int
	modNewLinesTok, modNewWordsTok, modCommands                        int
}

func main() {
	repo := flag.String("repo", ".", "the git repository whose history to replay")
	n := flag.Int("n", 300, "how many non-merge commits, newest first")
	verbose := flag.Bool("v", false, "print every commit's outcome")
	show := flag.String("show", "", "print the hpatch script and apply_patch envelope of this commit")
	flag.Parse()
	ctx := context.Background()
	top, err := git(ctx, *repo, "rev-parse", "--show-toplevel")
	if err != nil {
		fail(err)
	}
	dir := strings.TrimSpace(string(top))
	list, err := git(ctx, dir, "rev-list", "--no-merges", "-n", fmt.Sprint(*n), "HEAD")
	if err != nil {
		fail(err)
	}
	var st stats
	for _, c := range strings.Fields(string(list)) {
		replay(ctx, dir, c, &st, *verbose, *show)
	}
	fmt.Printf("repository: %s\n", dir)
	fmt.Printf("commits: %d, text files touched: %d, exact matches: %d, mismatches: %d, rejected scripts: %d, inexpressible: %d (binary files left out: %d)\n",
		st.commits, st.files, st.exact, st.mismatched, st.rejected, st.inexpressible, st.binary)
	fmt.Printf("targets: %d text, %d row\n", st.textTargets, st.rowTargets)
	fmt.Printf("edit tokens (o200k): hpatch %d, apply_patch %d, ratio %.1f%%\n", st.hpTok, st.apTok, pct(st.hpTok, st.apTok))
	fmt.Printf("modify-only commits: %d, hpatch %d (%d commands), apply_patch %d, ratio %.1f%%\n", st.modCommits, st.modHpTok, st.modCommands, st.modApTok, pct(st.modHpTok, st.modApTok))
	fmt.Printf("new text alone in modify-only commits: added lines %d tokens (%.1f%% of apply_patch), changed words %d tokens (%.1f%%)\n",
		st.modNewLinesTok, pct(st.modNewLinesTok, st.modApTok), st.modNewWordsTok, pct(st.modNewWordsTok, st.modApTok))
	fmt.Printf("read of the touched ranges (+-3 lines): verified rows %d tokens, plain numbered lines (cat -n) %d tokens, ratio %.1f%%\n", st.readRowsTok, st.readNumTok, pct(st.readRowsTok, st.readNumTok))
	fmt.Printf("edit+read: hpatch %d, apply_patch %d, ratio %.1f%%\n", st.hpTok+st.readRowsTok, st.apTok+st.readNumTok, pct(st.hpTok+st.readRowsTok, st.apTok+st.readNumTok))
}

func pct(a, b int) float64 { return 100 * float64(a) / float64(max(b, 1)) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "replay:", err)
	os.Exit(1)
}

func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	var out, errb bytes.Buffer
	res, err := proc.Run(ctx, proc.Spec{Path: "git", Args: append([]string{"-c", "core.quotepath=off"}, args...), Dir: dir,
		Env: proc.Env(os.LookupEnv, []string{"PATH", "HOME"}, "GIT_CONFIG_NOSYSTEM=1"), Stdout: &out, Stderr: &errb})
	if err != nil {
		return nil, err
	}
	if res.Exit != 0 {
		return nil, fmt.Errorf("git %s: %s", strings.Join(args, " "), strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

type change struct {
	status   byte // A M D R
	old, new string
	before   []byte
	after    []byte
}

func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

func replay(ctx context.Context, dir, c string, st *stats, verbose bool, show string) {
	parent := c + "^"
	args := []string{"diff-tree", "-r", "-M", "--no-commit-id", "--name-status", "-z", parent, c}
	if _, err := git(ctx, dir, "rev-parse", "--verify", "-q", parent); err != nil {
		args = []string{"diff-tree", "--root", "-r", "-M", "--no-commit-id", "--name-status", "-z", c} // the first commit
	}
	raw, err := git(ctx, dir, args...)
	if err != nil {
		fail(err)
	}
	f := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	var chs []change
	for i := 0; i < len(f) && f[i] != ""; {
		s := f[i]
		ch := change{status: s[0]}
		switch s[0] {
		case 'R', 'C':
			ch.old, ch.new = f[i+1], f[i+2]
			i += 3
			if s[0] == 'C' {
				ch.status, ch.old = 'A', ""
			}
		default:
			ch.old, ch.new = f[i+1], f[i+1]
			i += 2
		}
		if ch.status == 'A' {
			ch.old = ""
		}
		if ch.status == 'D' {
			ch.new = ""
		}
		if ch.old != "" {
			ch.before, _ = git(ctx, dir, "cat-file", "blob", parent+":"+ch.old)
		}
		if ch.new != "" {
			ch.after, _ = git(ctx, dir, "cat-file", "blob", c+":"+ch.new)
		}
		if !isText(ch.before) || !isText(ch.after) || ch.status == 'T' {
			st.binary++
			continue
		}
		chs = append(chs, ch)
	}
	if len(chs) == 0 {
		return
	}
	st.commits++
	st.files += len(chs)
	ws, err := os.MkdirTemp("", "rowkit-replay")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(ws)
	modifyOnly := true
	var newLines, newWords strings.Builder
	var script, envelope strings.Builder
	envelope.WriteString("*** Begin Patch\n")
	inexpressible := ""
	for _, ch := range chs {
		if ch.status != 'M' {
			modifyOnly = false
		}
		if ch.old != "" {
			p := filepath.Join(ws, ch.old)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, ch.before, 0o644); err != nil {
				fail(err)
			}
		}
		if why := express(&script, ch, st); why != "" {
			inexpressible = why
		}
		applyPatch(&envelope, ch)
		newText(&newLines, &newWords, ch)
		readCost(ch, st)
	}
	envelope.WriteString("*** End Patch\n")
	if c == show || strings.HasPrefix(c, show) && show != "" {
		fmt.Printf("--- hpatch %s\n%s--- apply_patch\n%s", c, script.String(), envelope.String())
	}
	hp, ap := rows.CountTokens(script.String()), rows.CountTokens(envelope.String())
	st.hpTok += hp
	st.apTok += ap
	if modifyOnly {
		st.modCommits++
		st.modHpTok += hp
		st.modApTok += ap
		st.modNewLinesTok += rows.CountTokens(newLines.String())
		st.modNewWordsTok += rows.CountTokens(newWords.String())
		if sc, _ := patch.Parse(script.String()); sc != nil {
			st.modCommands += len(sc.Commands)
		}
	}
	if inexpressible != "" {
		st.inexpressible++
		fmt.Printf("%.10s inexpressible: %s\n", c, inexpressible)
		return
	}
	root, err := workspace.Open(ws)
	if err != nil {
		fail(err)
	}
	res, err := patch.Apply(ctx, root, script.String(), patch.Options{})
	if err != nil {
		st.rejected++
		fmt.Printf("%.10s rejected: %v\n", c, err)
		if res != nil {
			for _, f := range res.Failures {
				fmt.Printf("  %s\n", f.Line())
			}
		}
		return
	}
	ok := true
	for _, ch := range chs {
		if ch.old != "" && ch.old != ch.new {
			if _, err := os.Lstat(filepath.Join(ws, ch.old)); err == nil {
				ok = false
				fmt.Printf("%.10s %s still exists\n", c, ch.old)
			}
		}
		if ch.new != "" {
			got, err := os.ReadFile(filepath.Join(ws, ch.new))
			if err != nil || !bytes.Equal(got, ch.after) {
				ok = false
				fmt.Printf("%.10s %s differs from the commit\n", c, ch.new)
			}
		}
	}
	if ok {
		st.exact++
	} else {
		st.mismatched++
	}
	if verbose {
		fmt.Printf("%.10s files %d hpatch %d apply_patch %d tokens, new lines %d, changed words %d, modify-only %v, %s\n", c, len(chs), hp, ap,
			rows.CountTokens(newLines.String()), rows.CountTokens(newWords.String()), modifyOnly, map[bool]string{true: "exact", false: "MISMATCH"}[ok])
	}
}

// split returns src's lines with their terminators (LF, CRLF, lone CR), as
// verified rows count them.
func split(src []byte) []string {
	var starts []int
	rows.Lines(src, func(s, _ int) { starts = append(starts, s) })
	out := make([]string, len(starts))
	for i, s := range starts {
		e := len(src)
		if i+1 < len(starts) {
			e = starts[i+1]
		}
		out[i] = string(src[s:e])
	}
	return out
}

func term(line string) string {
	switch {
	case strings.HasSuffix(line, "\r\n"):
		return "\r\n"
	case strings.HasSuffix(line, "\n"), strings.HasSuffix(line, "\r"):
		return line[len(line)-1:]
	}
	return ""
}

func text(line string) string { return line[:len(line)-len(term(line))] }

func pathArg(p string) string {
	if strings.ContainsAny(p, " \t\"\\") || strings.HasPrefix(p, "<<") {
		return jsonString(p)
	}
	return p
}

// express appends the commit's change to one file as hpatch commands.
func express(b *strings.Builder, ch change, st *stats) string {
	switch ch.status {
	case 'D':
		fmt.Fprintf(b, "in %s\nrm\n", pathArg(ch.old))
		return ""
	case 'A':
		fmt.Fprintf(b, "new %s\n", pathArg(ch.new))
		if len(ch.after) > 0 {
			b.WriteString("type " + valueOf(string(ch.after)))
		}
		return ""
	case 'M', 'R':
	default:
		return fmt.Sprintf("status %c of %s", ch.status, ch.new)
	}
	fmt.Fprintf(b, "in %s\n", pathArg(ch.old))
	if ch.status == 'R' {
		fmt.Fprintf(b, "mv %s\n", pathArg(ch.new))
	}
	a, c := split(ch.before), split(ch.after)
	x, err := rows.NewIndex(ch.before)
	if err != nil {
		return err.Error()
	}
	dropEOF := len(c) > 0 && term(c[len(c)-1]) == "" && (len(a) == 0 || term(a[len(a)-1]) != "")
	var cmds []command
	for _, h := range blocks(diffLines(a, c)) {
		// Only the final terminator went: type EOF says it.
		if dropEOF && h.on == h.nn && h.oa+h.on == len(a) && h.na+h.nn == len(c) && sameText(a[h.oa:h.oa+h.on], c[h.na:h.na+h.nn]) {
			continue
		}
		neu := strings.Join(c[h.na:h.na+h.nn], "")
		switch {
		case h.on == 0:
			cmds = append(cmds, rowInsert(x, h.oa+1, neu))
		case h.nn == 0:
			cmds = append(cmds, rowReplace(x, h.oa+1, h.oa+h.on, ""))
		default:
			cmds = append(cmds, blockCommands(x, h.oa+1, strings.Join(a[h.oa:h.oa+h.on], ""), neu)...)
		}
	}
	for _, cm := range mergeCounts(ch.before, x, cmds) {
		b.WriteString(cm.text)
		if cm.row {
			st.rowTargets++
		} else {
			st.textTargets++
		}
	}
	if dropEOF {
		b.WriteString("type EOF \"\"\n")
	}
	return ""
}

// blocks joins hunks that only a line or two keep apart, so that one
// command may span them.
func blocks(hs []hunk) []hunk {
	var out []hunk
	for _, h := range hs {
		if k := len(out); k > 0 {
			p := &out[k-1]
			if gap := h.oa - (p.oa + p.on); gap <= 2 {
				p.on = h.oa + h.on - p.oa
				p.nn = h.na + h.nn - p.na
				continue
			}
		}
		out = append(out, h)
	}
	return out
}

func sameText(a, b []string) bool {
	for i := range a {
		if text(a[i]) != text(b[i]) {
			return false
		}
	}
	return true
}

// tokens splits s into words (identifier runs), runs of blanks, and single
// other characters.
func tokens(s string) []string {
	var out []string
	isWord := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	for i := 0; i < len(s); {
		j := i + 1
		switch {
		case isWord(s[i]):
			for j < len(s) && isWord(s[j]) {
				j++
			}
		case s[i] == ' ' || s[i] == '\t':
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// applyPatch appends the Codex apply_patch form of one file's change: the
// whole content for an added file, hunks with three lines of context for
// an update.
func applyPatch(b *strings.Builder, ch change) {
	switch ch.status {
	case 'D':
		fmt.Fprintf(b, "*** Delete File: %s\n", ch.old)
		return
	case 'A':
		fmt.Fprintf(b, "*** Add File: %s\n", ch.new)
		for _, l := range split(ch.after) {
			b.WriteString("+" + text(l) + "\n")
		}
		return
	}
	fmt.Fprintf(b, "*** Update File: %s\n", ch.old)
	if ch.status == 'R' {
		fmt.Fprintf(b, "*** Move to: %s\n", ch.new)
	}
	a, c := split(ch.before), split(ch.after)
	hs := diffLines(a, c)
	for i := 0; i < len(hs); {
		j := i
		for j+1 < len(hs) && hs[j+1].oa-(hs[j].oa+hs[j].on) <= 6 {
			j++
		}
		pre := max(0, hs[i].oa-3)
		post := min(len(a), hs[j].oa+hs[j].on+3)
		b.WriteString("@@\n")
		o := pre
		for k := i; k <= j; k++ {
			for ; o < hs[k].oa; o++ {
				b.WriteString(" " + text(a[o]) + "\n")
			}
			for l := hs[k].oa; l < hs[k].oa+hs[k].on; l++ {
				b.WriteString("-" + text(a[l]) + "\n")
			}
			for l := hs[k].na; l < hs[k].na+hs[k].nn; l++ {
				b.WriteString("+" + text(c[l]) + "\n")
			}
			o = hs[k].oa + hs[k].on
		}
		for ; o < post; o++ {
			b.WriteString(" " + text(a[o]) + "\n")
		}
		if post == len(a) && (len(c) == 0 || term(c[len(c)-1]) == "") {
			b.WriteString("*** End of File\n")
		}
		i = j + 1
	}
}

// readCost counts what an agent reads before editing a modified or renamed
// file: the touched old lines and three lines either side, as verified rows
// and as plain numbered lines (cat -n).
func readCost(ch change, st *stats) {
	if ch.status != 'M' && ch.status != 'R' {
		return
	}
	a := split(ch.before)
	want := make([]bool, len(a))
	for _, h := range diffLines(a, split(ch.after)) {
		for l := max(0, h.oa-3); l < min(len(a), h.oa+h.on+3); l++ {
			want[l] = true
		}
	}
	var vr, num []byte
	for i, w := range want {
		if w {
			vr = rows.AppendRow(vr, i+1, []byte(text(a[i])))
			num = fmt.Appendf(num, "%6d\t%s\n", i+1, text(a[i]))
		}
	}
	st.readRowsTok += rows.CountTokens(string(vr))
	st.readNumTok += rows.CountTokens(string(num))
}

// newText collects the text a modification must spell out in any format:
// the added lines, and (finer) the changed words of each changed block,
// one per line.
func newText(lines, words *strings.Builder, ch change) {
	if ch.status != 'M' && ch.status != 'R' {
		return
	}
	a, c := split(ch.before), split(ch.after)
	for _, h := range diffLines(a, c) {
		for _, l := range c[h.na : h.na+h.nn] {
			lines.WriteString(text(l) + "\n")
		}
		if h.on == 0 {
			words.WriteString(strings.Join(c[h.na:h.na+h.nn], ""))
			continue
		}
		old, neu := strings.Join(a[h.oa:h.oa+h.on], ""), strings.Join(c[h.na:h.na+h.nn], "")
		ot, nt := tokens(old), tokens(neu)
		for _, w := range diffLines(ot, nt) {
			if w.nn > 0 {
				words.WriteString(strings.Join(nt[w.na:w.na+w.nn], "") + "\n")
			}
		}
	}
}

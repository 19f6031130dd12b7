// Command symbolbench measures hsymbol against the language server it
// asks, in one run: per query, the server's own response time from a
// direct LSP client (a second server, warm, asked the very requests the
// engine sends), hsymbol through its warm broker (a process per call, as a
// shell runs it), the engine in-process (what rowkit mcp does), and the
// start of a rowkit process alone (the floor of a shell call); and the
// cold start of a broker. -tokens compares the tokens of hsymbol's answer
// for the references of a widely used name with those of hgrep -w NAME
// and the hread ranges an agent would read to tell the references from
// the other hits (each file's import block). -tsls compares TypeScript 7's
// server with typescript-language-server (tsserver) on the same project.
// bench/symbol.sh and bench/symbol_ts.sh run it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/rowkit/rowkit/internal/grep"
	"github.com/rowkit/rowkit/internal/lsp"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/symbol"
	"github.com/rowkit/rowkit/internal/tokens"
	"github.com/rowkit/rowkit/internal/workspace"
)

// query is one question: the first line of file matching at, the symbol
// on it.
type query struct {
	op, file, at, sym string
}

type corpus struct {
	lang, root string
	queries    []query
}

var (
	rowkit  = flag.String("rowkit", "", "the rowkit binary (hsymbol is run as `rowkit symbol`)")
	runs    = flag.Int("runs", 15, "rounds of warm queries")
	goDir   = flag.String("go", "", "the Go workspace (default $(go env GOROOT)/src)")
	pyDir   = flag.String("py", "", "the Python workspace")
	tsDir   = flag.String("ts", "", "the TypeScript workspace")
	tokensF = flag.Bool("tokens", false, "compare the tokens of refs with hgrep -w and hread")
	tsls    = flag.String("tsls", "", "typescript-language-server to compare TypeScript 7's server with (its node_modules/.bin/typescript-language-server; tsserver beside it)")
	langs   = flag.String("langs", "go,python,typescript", "the languages to time")
	genTS   = flag.String("gen-ts", "", "write the generated TypeScript project to this directory and exit")
)

func main() {
	flag.Parse()
	if *genTS != "" {
		generateTS(*genTS, 150)
		return
	}
	env := func(k string) (string, bool) { return os.LookupEnv(k) }
	if *tsls != "" {
		compareTS(env)
		return
	}
	if *goDir == "" {
		out, _ := exec.Command("go", "env", "GOROOT").Output()
		*goDir = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	corpora := []corpus{
		{"go", *goDir, []query{
			{"def", "strings/replace.go", `\bBuilder\b`, "Builder"},
			{"refs", "strings/builder.go", `^func \(b \*Builder\) Grow\(`, "Grow"},
			{"hover", "strings/builder.go", `^func \(b \*Builder\) Grow\(`, "Grow"},
		}},
		{"python", *pyDir, []query{
			{"def", "json/__init__.py", `^from \.decoder import`, "JSONDecoder"},
			{"refs", "json/decoder.py", `^class JSONDecodeError`, "JSONDecodeError"},
			{"hover", "json/decoder.py", `^class JSONDecodeError`, "JSONDecodeError"},
		}},
		{"typescript", *tsDir, []query{
			{"def", "src/view/v001.tsx", `new Task`, "Task"},
			{"refs", "src/model/task.ts", `^export class Task`, "Task"},
			{"hover", "src/model/task.ts", `^export class Task`, "Task"},
		}},
	}
	fmt.Printf("| language | op | direct client p50 ms | hsymbol p50 ms | hsymbol / direct | in-process p50 ms | in-process / direct | rowkit start p50 ms |\n")
	fmt.Printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	var colds []string
	for _, c := range corpora {
		if c.root == "" || !slices.Contains(strings.Split(*langs, ","), c.lang) {
			continue
		}
		colds = append(colds, timeCorpus(c, env))
	}
	fmt.Println()
	for _, c := range colds {
		fmt.Println(c)
	}
	if *tokensF {
		compareTokens(*goDir, env)
	}
}

// locate finds the row and the symbol of q in root.
func locate(root string, q query) (line int, text string) {
	b, err := os.ReadFile(filepath.Join(root, q.file))
	if err != nil {
		fail("%v", err)
	}
	x, err := rows.NewIndex(b)
	if err != nil {
		fail("%s: %v", q.file, err)
	}
	re := regexp.MustCompile(q.at)
	for n := 1; n <= x.Count(); n++ {
		if re.Match(x.Text(n)) {
			return n, string(x.Text(n))
		}
	}
	fail("%s: no line matches %s", q.file, q.at)
	return 0, ""
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "symbolbench: "+format+"\n", args...)
	os.Exit(1)
}

// request is what the engine asks for an op: the same requests, sent by
// the direct client.
func requests(op string) []string {
	switch op {
	case "def":
		return []string{"textDocument/definition"}
	case "refs":
		return []string{"textDocument/references", "textDocument/definition"}
	case "hover":
		return []string{"textDocument/hover"}
	}
	return nil
}

// direct is a plain client of a server: started, ready, documents open.
type direct struct {
	srv    *lsp.Server
	root   string
	opened map[string]bool
}

func startDirect(cfg lsp.Config, lang string) (*direct, time.Duration) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv, err := lsp.Start(ctx, cfg)
	if err != nil {
		fail("starting %s: %v", cfg.Path, err)
	}
	d := &direct{srv: srv, root: cfg.Root, opened: map[string]bool{}}
	if lang == "go" {
		for {
			p, ch := srv.Progress()
			if p.Begun > 0 && len(p.Active) == 0 {
				break
			}
			<-ch
		}
	}
	return d, time.Since(t0)
}

func (d *direct) open(file, lang string) {
	if d.opened[file] {
		return // a second didOpen of one document breaks the protocol
	}
	d.opened[file] = true
	b, _ := os.ReadFile(filepath.Join(d.root, file))
	id := map[string]string{".go": "go", ".py": "python", ".ts": "typescript", ".tsx": "typescriptreact"}[filepath.Ext(file)]
	d.srv.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": lsp.URI(filepath.Join(d.root, file)), "languageId": id, "version": 1, "text": string(b)}})
}

// ask sends the requests of op at the position and returns the time and
// the answers.
func (d *direct) ask(op, file string, line, char int) (time.Duration, []json.RawMessage) {
	pos := map[string]any{"textDocument": map[string]any{"uri": lsp.URI(filepath.Join(d.root, file))},
		"position": map[string]any{"line": line - 1, "character": char}}
	t0 := time.Now()
	var out []json.RawMessage
	for _, m := range requests(op) {
		p := pos
		if m == "textDocument/references" {
			p = map[string]any{"textDocument": pos["textDocument"], "position": pos["position"], "context": map[string]any{"includeDeclaration": true}}
		}
		raw, err := d.srv.CallRaw(context.Background(), m, p)
		if err != nil {
			fail("%s: %v", m, err)
		}
		out = append(out, raw)
	}
	return time.Since(t0), out
}

func utf16Col(text, sym string) int {
	i := regexp.MustCompile(`\b` + regexp.QuoteMeta(sym) + `\b`).FindStringIndex(text)
	if i == nil {
		fail("%q is not in %q", sym, text)
	}
	n := 0
	for _, r := range text[:i[0]] {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

// hsymbol runs rowkit symbol in root with the broker directory dir.
func hsymbol(root, dir string, args ...string) (time.Duration, string, error) {
	cmd := exec.Command(*rowkit, append([]string{"symbol", "--max-output", "0"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "ROWKIT_BROKER_DIR="+dir)
	t0 := time.Now()
	out, err := cmd.Output()
	return time.Since(t0), string(out), err
}

func timeCorpus(c corpus, env func(string) (string, bool)) string {
	root, _ := filepath.EvalSymlinks(c.root)
	brokers, _ := os.MkdirTemp("", "rkbench")
	os.Chmod(brokers, 0o700)
	defer func() {
		// The broker ends when its idle time runs out; end it now.
		locks, _ := filepath.Glob(filepath.Join(brokers, "*.lock"))
		for _, l := range locks {
			b, _ := os.ReadFile(l)
			exec.Command("kill", strings.TrimSpace(string(b))).Run()
		}
		os.RemoveAll(brokers)
	}()
	// Cold: a fresh broker, its server started and loaded by the first
	// call.
	q0 := c.queries[0]
	line0, _ := locate(root, q0)
	coldT, _, err := hsymbol(root, brokers, "--wait", "900", q0.op, q0.file, fmt.Sprint(line0), q0.sym)
	cold := fmt.Sprintf("%s: cold start (a new broker, its server loading the workspace, then `%s`): %s ms", c.lang, q0.op, ms(coldT))
	if err != nil {
		cold += fmt.Sprintf(" (%v)", err)
	}
	cfg, err := symbol.DirectConfig(c.lang, root, env)
	if err != nil {
		fail("%v", err)
	}
	d, dcold := startDirect(cfg, c.lang)
	defer d.srv.Close()
	cold += fmt.Sprintf("; the direct client's server ready in %s ms", ms(dcold))
	ws, err := workspace.Open(root)
	if err != nil {
		fail("%v", err)
	}
	e, err := symbol.Open(ws, symbol.Options{LookupEnv: env})
	if err != nil {
		fail("%v", err)
	}
	defer e.Close()
	type times struct{ direct, cli, engine, start []time.Duration }
	ts := make([]times, len(c.queries))
	for i, q := range c.queries {
		d.open(q.file, c.lang)
		line, text := locate(root, q)
		char := utf16Col(text, q.sym)
		req := symbol.Request{Op: q.op, Path: q.file, Row: fmt.Sprint(line), Symbol: q.sym, Wait: 15 * time.Minute}
		// Warm every path once; check the answers agree.
		_, raw := d.ask(q.op, q.file, line, char)
		res, err := e.Query(context.Background(), req, rows.Budget{Limit: 1 << 30, Ceiling: 1 << 30})
		if err != nil || !res.Complete {
			fail("%s %s: %v %+v", c.lang, q.op, err, res)
		}
		_, out, err := hsymbol(root, brokers, "--wait", "900", q.op, q.file, fmt.Sprint(line), q.sym)
		if err != nil && q.op != "refs" {
			fail("hsymbol %s %s: %v", c.lang, q.op, err)
		}
		_ = raw
		_ = out
		for range *runs {
			t, _ := d.ask(q.op, q.file, line, char)
			ts[i].direct = append(ts[i].direct, t)
			t, _, _ = hsymbol(root, brokers, q.op, q.file, fmt.Sprint(line), q.sym)
			ts[i].cli = append(ts[i].cli, t)
			t0 := time.Now()
			e.Query(context.Background(), req, rows.DefaultBudget)
			ts[i].engine = append(ts[i].engine, time.Since(t0))
			t0 = time.Now()
			exec.Command(*rowkit, "--version").Run()
			ts[i].start = append(ts[i].start, time.Since(t0))
		}
	}
	for i, q := range c.queries {
		dd, cc, ee, ss := p50(ts[i].direct), p50(ts[i].cli), p50(ts[i].engine), p50(ts[i].start)
		fmt.Printf("| %s | %s | %s | %s | %.2fx | %s | %.2fx | %s |\n", c.lang, q.op, ms(dd), ms(cc), float64(cc)/float64(dd), ms(ee), float64(ee)/float64(dd), ms(ss))
	}
	return cold
}

// compareTokens: the references of strings.Builder in the Go tree, as
// hsymbol answers them, against what an agent with grep reads for the
// same answer: hgrep -w Builder, and in each file with a hit the rows of
// its package clause and import block (which Builder a hit is: the
// strings one, another package's, a local name).
func compareTokens(root string, env func(string) (string, bool)) {
	root, _ = filepath.EvalSymlinks(root)
	ws, err := workspace.Open(root)
	if err != nil {
		fail("%v", err)
	}
	e, err := symbol.Open(ws, symbol.Options{LookupEnv: env})
	if err != nil {
		fail("%v", err)
	}
	defer e.Close()
	q := query{"refs", "strings/builder.go", `^type Builder struct`, "Builder"}
	line, _ := locate(root, q)
	huge := rows.Budget{Limit: 1 << 30, Ceiling: 1 << 30}
	res, err := e.Query(context.Background(), symbol.Request{Op: "refs", Path: q.file, Row: fmt.Sprint(line), Symbol: q.sym, Wait: 15 * time.Minute}, huge)
	if err != nil || !res.Complete {
		fail("refs: %v %+v", err, res)
	}
	answer := symbol.Body(res)
	refFiles := map[string]bool{}
	for _, en := range res.Entries {
		refFiles[en.Path] = true
	}
	gq := &grep.Query{Patterns: []string{q.sym}, Word: true, Types: []string{"go"}}
	plan, err := gq.Plan()
	if err != nil {
		fail("%v", err)
	}
	gres, err := grep.Collect(context.Background(), plan, grep.Config{Root: ws, Budget: huge, LookupEnv: env})
	if err != nil {
		fail("hgrep: %v", err)
	}
	hits := grep.Text(gres)
	files := map[string]bool{}
	for _, r := range gres.Rows {
		files[r.Path] = true
	}
	var reads strings.Builder
	importRE := regexp.MustCompile(`^import \(|^import "`)
	for f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		x, err := rows.NewIndex(b)
		if err != nil {
			continue
		}
		end, inBlock := 0, false
		for n := 1; n <= x.Count(); n++ {
			t := string(x.Text(n))
			switch {
			case inBlock && t == ")":
				end, inBlock = n, false
			case importRE.MatchString(t):
				end = n
				inBlock = strings.HasSuffix(t, "(")
			case end > 0 && !inBlock && t != "" && !strings.HasPrefix(t, "//"):
				n = x.Count()
			}
		}
		if end == 0 {
			end = 1
		}
		var rb []byte
		for n := 1; n <= end; n++ {
			rb = rows.AppendRow(rb, n, x.Text(n))
		}
		reads.Write(rb)
	}
	at, ht, rt := tokens.Count(answer), tokens.Count(hits), tokens.Count(reads.String())
	fmt.Printf("\nrefs of strings.Builder in %s: hsymbol %d rows in %d files, %d tokens; hgrep -w Builder %d rows in %d files, %d tokens, plus the import blocks of those files %d tokens: %d tokens, %.2fx hsymbol's\n",
		root, len(res.Entries), len(refFiles), at, len(gres.Rows), len(files), ht, rt, ht+rt, float64(ht+rt)/float64(at))
}

// compareTS times TypeScript 7's server and typescript-language-server
// (with the tsserver beside it) on the TypeScript workspace: start to
// first answer, and warm def, refs, hover; and whether each loads a
// tsconfig plugin the workspace ships.
func compareTS(env func(string) (string, bool)) {
	root, _ := filepath.EvalSymlinks(*tsDir)
	ts7, err := symbol.DirectConfig("typescript", root, env)
	if err != nil {
		fail("%v", err)
	}
	tsserver := filepath.Join(filepath.Dir(filepath.Dir(*tsls)), "typescript", "lib", "tsserver.js")
	alt := lsp.Config{Path: *tsls, Args: []string{"--stdio"}, Dir: root, Root: root, Env: ts7.Env,
		InitializationOptions: map[string]any{"tsserver": map[string]any{"path": tsserver}}}
	qs := []query{
		{"def", "src/view/v001.tsx", `new Task`, "Task"},
		{"refs", "src/model/task.ts", `^export class Task`, "Task"},
		{"hover", "src/model/task.ts", `^export class Task`, "Task"},
	}
	fmt.Printf("| server | start to first answer ms | def p50 ms | refs p50 ms | hover p50 ms | refs found |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, c := range []struct {
		name string
		cfg  lsp.Config
	}{{"TypeScript 7 (tsc --lsp)", ts7}, {"typescript-language-server + tsserver", alt}} {
		t0 := time.Now()
		d, _ := startDirect(c.cfg, "typescript")
		line, text := locate(root, qs[0])
		d.open(qs[0].file, "typescript")
		d.ask("def", qs[0].file, line, utf16Col(text, qs[0].sym))
		first := time.Since(t0)
		row := fmt.Sprintf("| %s | %s |", c.name, ms(first))
		nrefs := 0
		for _, q := range qs {
			line, text := locate(root, q)
			d.open(q.file, "typescript")
			var ds []time.Duration
			for range *runs {
				t, out := d.ask(q.op, q.file, line, utf16Col(text, q.sym))
				ds = append(ds, t)
				if q.op == "refs" {
					locs, _ := lsp.DecodeLocations(out[0])
					nrefs = len(locs)
				}
			}
			row += " " + ms(p50(ds)) + " |"
		}
		fmt.Printf("%s %d |\n", row, nrefs)
		d.srv.Close()
	}
}

// generateTS writes a TypeScript project with types and JSX: a Task class
// and an Item interface, n modules that use them and n components that
// render them.
func generateTS(dir string, n int) {
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			fail("%v", err)
		}
	}
	write("tsconfig.json", `{"compilerOptions": {"target": "es2022", "module": "esnext", "moduleResolution": "bundler", "jsx": "preserve", "strict": true}, "include": ["src"]}`+"\n")
	write("src/model/task.ts", `export interface Item {
  id: number;
  label(): string;
}

export class Task implements Item {
  constructor(public id: number, public title: string, public done = false) {}
  label(): string {
    return (this.done ? "[x] " : "[ ] ") + this.title;
  }
}
`)
	write("src/jsx.d.ts", "declare namespace JSX {\n  interface IntrinsicElements { [name: string]: any }\n}\n")
	for i := range n {
		write(fmt.Sprintf("src/model/m%03d.ts", i), fmt.Sprintf(`import { Item, Task } from "./task";

export class List%03d<T extends Item> {
  private items: T[] = [];
  add(item: T): this {
    this.items.push(item);
    return this;
  }
  labels(): string[] {
    return this.items.map((it) => it.label());
  }
}

export function make%03d(): List%03d<Task> {
  return new List%03d<Task>().add(new Task(%d, "task %d"));
}
`, i, i, i, i, i, i))
		write(fmt.Sprintf("src/view/v%03d.tsx", i), fmt.Sprintf(`import { Task } from "../model/task";
import { make%03d } from "../model/m%03d";

export function View%03d(props: { title: string }) {
  const list = make%03d().add(new Task(%d, props.title));
  return <ul>{list.labels().map((l) => <li key={l}>{l}</li>)}</ul>;
}
`, i, i, i, i, i))
	}
}

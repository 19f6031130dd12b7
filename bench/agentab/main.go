// Command agentab is the played-model benchmark of issue 26: real bug
// fixes from the history of spf13/cobra (Go) and sqlparse (Python),
// each solved by one recorded plan replayed in four configurations
// (Codex + rowkit router, Codex alone, Claude Code + rowkit mcp, Claude
// Code alone) against the real clients, with internal/agenttest's
// server playing the model. What the model paid is read from the
// requests the clients sent.
//
//	agentab setup TASK DIR          build a task's tree: the fix's parent and the fix's tests
//	agentab run [-tasks T,..] [-configs C,..] [-rowkit BIN] [-sessions DIR]
//	                                 replay the plans; every session must end with the task's test passing
//	agentab play -task T -config C [-rowkit BIN]
//	                                 play the model: the plan's turns, then wait for more (see README)
//	agentab figures LOG...           the figures of recorded sessions (session.jsonl.gz)
//	agentab execbound                what Codex hands its model whole of a carrier's output, per model and max_output_tokens
//	agentab mcpcosts                 the per-request tokens of rowkit mcp's tool schemas as each client sends them (bench/out/rowkit)
//	agentab probe [-rowkit BIN] [-trees DIR] [-show]
//	                                 the tokens of fixed requests of the diet: MCP calls, router shell scripts, MCP tool definitions
//	agentab costs LOG...             the tokens of each tool definition and of the instructions, first and last request
//	agentab show LOG...              a recorded session as the model saw it: each request's new outputs, each reply
//	agentab table [-sessions DIR] [-recount]  the Markdown table of every recorded session's figures
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	bench := benchDir()
	ctx := context.Background()
	switch os.Args[1] {
	case "setup":
		if len(os.Args) != 4 {
			usage()
		}
		t, err := loadTask(bench, os.Args[2])
		check(err)
		check(t.Setup(ctx, os.Args[3]))
	case "run", "play":
		fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
		tasks := fs.String("tasks", "", "comma-separated tasks (default: all)")
		task := fs.String("task", "", "the task to play")
		configs := fs.String("configs", "", "comma-separated configurations (default: all four)")
		config := fs.String("config", string(CodexRouter), "the configuration to play in")
		rowkit := fs.String("rowkit", "bench/out/rowkit", "the rowkit binary")
		sessions := fs.String("sessions", filepath.Join(bench, "sessions"), "where the sessions are recorded")
		keep := fs.String("tree", "", "play: the task tree (kept)")
		fs.Parse(os.Args[2:])
		bin, err := filepath.Abs(*rowkit)
		check(err)
		if os.Args[1] == "play" {
			t, err := loadTask(bench, *task)
			check(err)
			out, err := os.MkdirTemp("", "agentab-play-")
			check(err)
			pending := filepath.Join(out, "pending.txt")
			fmt.Fprintf(os.Stderr, "agentab: playing %s in %s; read %s, append turns to %s/plan.json\n", t.Name, *config, pending, t.Dir)
			s := &session{task: t, cfg: Config(*config), rowkit: bin, out: out, play: pending, tree: *keep, keep: true}
			f, err := s.run(ctx)
			check(err)
			printFigures(f)
			return
		}
		names, err := taskNames(bench)
		check(err)
		if *tasks != "" {
			names = strings.Split(*tasks, ",")
		}
		cfgs := Configs
		if *configs != "" {
			cfgs = nil
			for _, c := range strings.Split(*configs, ",") {
				cfgs = append(cfgs, Config(c))
			}
		}
		failures := 0
		for _, n := range names {
			t, err := loadTask(bench, n)
			check(err)
			for _, c := range cfgs {
				start := time.Now()
				cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
				s := &session{task: t, cfg: c, rowkit: bin, out: filepath.Join(*sessions, n, string(c))}
				f, err := s.run(cctx)
				cancel()
				if err != nil {
					failures++
					fmt.Fprintf(os.Stderr, "agentab: FAIL %s %s after %s: %v\n", n, c, time.Since(start).Round(time.Second), err)
					continue
				}
				printFigures(f)
			}
		}
		if failures > 0 {
			fmt.Fprintf(os.Stderr, "agentab: %d sessions failed\n", failures)
			os.Exit(1)
		}
	case "figures":
		for _, p := range os.Args[2:] {
			reqs, err := loadSession(p)
			check(err)
			f, err := figuresOf(reqs)
			check(err)
			f.Task, f.Config = filepath.Base(filepath.Dir(filepath.Dir(p))), filepath.Base(filepath.Dir(p))
			printFigures(f)
		}
	case "execbound":
		out, err := execBound(ctx)
		check(err)
		fmt.Print(out)
	case "mcpcosts":
		bin, err := filepath.Abs("bench/out/rowkit")
		check(err)
		out, err := mcpCosts(ctx, bin)
		check(err)
		fmt.Print(out)
	case "probe":
		fs := flag.NewFlagSet("probe", flag.ExitOnError)
		rowkit := fs.String("rowkit", "bench/out/rowkit", "the rowkit binary")
		trees := fs.String("trees", "bench/out/probe", "where the task trees are kept")
		show := fs.Bool("show", false, "print each text too")
		fs.Parse(os.Args[2:])
		bin, err := filepath.Abs(*rowkit)
		check(err)
		dir, err := filepath.Abs(*trees)
		check(err)
		check(probeAll(ctx, bench, bin, dir, *show))
	case "costs":
		for _, p := range os.Args[2:] {
			reqs, err := loadSession(p)
			check(err)
			fmt.Printf("%s\n%s", p, costs(reqs))
		}
	case "show":
		for _, p := range os.Args[2:] {
			reqs, err := loadSession(p)
			check(err)
			fmt.Print(show(reqs))
		}
	case "table":
		fs := flag.NewFlagSet("table", flag.ExitOnError)
		sessions := fs.String("sessions", filepath.Join(bench, "sessions"), "where the sessions are recorded")
		recount := fs.Bool("recount", false, "measure the sessions again from session.jsonl.gz, not figures.json")
		fs.Parse(os.Args[2:])
		figs, err := loadFigures(*sessions, *recount)
		check(err)
		fmt.Print(table(figs))
	default:
		usage()
	}
}

func printFigures(f *Figures) {
	fmt.Printf("%-18s %-13s turns %2d  read %6d  written %5d  failed %d  tools/request %5d  %5.1fs\n",
		f.Task, f.Config, f.Turns, f.Read, f.Written, f.Failed, f.Tools, f.Seconds)
	for _, c := range f.Calls {
		mark := ""
		if c.Failed {
			mark = " FAILED"
		}
		fmt.Printf("    %-14s read %6d  written %5d%s\n", c.ID, c.Read, c.Written, mark)
	}
}

// loadFigures reads sessions/TASK/CONFIG/figures.json, or with recount
// measures sessions/TASK/CONFIG/session.jsonl.gz again (an older
// recording, with today's figures).
func loadFigures(dir string, recount bool) ([]*Figures, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*", "*", "figures.json"))
	if err != nil {
		return nil, err
	}
	var out []*Figures
	for _, p := range paths {
		if recount {
			reqs, err := loadSession(filepath.Join(filepath.Dir(p), "session.jsonl.gz"))
			if err != nil {
				return nil, err
			}
			f, err := figuresOf(reqs)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			f.Task, f.Config = filepath.Base(filepath.Dir(filepath.Dir(p))), filepath.Base(filepath.Dir(p))
			out = append(out, f)
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		f := &Figures{}
		if err := json.Unmarshal(b, f); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// benchDir is bench/agentab: the directory of this command's source,
// found from the working directory (the module root or bench/agentab).
func benchDir() string {
	for _, d := range []string{"bench/agentab", "."} {
		if _, err := os.Stat(filepath.Join(d, "tasks")); err == nil {
			abs, _ := filepath.Abs(d)
			return abs
		}
	}
	fmt.Fprintln(os.Stderr, "agentab: run it from the module root (bench/agentab/tasks not found)")
	os.Exit(2)
	return ""
}

func check(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentab: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: agentab setup TASK DIR | run [-tasks T,..] [-configs C,..] [-rowkit BIN] [-sessions DIR] | play -task T -config C | figures LOG... | table [-sessions DIR] [-recount]")
	os.Exit(2)
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/rowkit/rowkit/internal/inspect"
	"github.com/rowkit/rowkit/internal/lang"
)

// perLanguage measures issue 10's target: one process per file on n files
// of each language, inspect_file against ctags (target <= 1.25x), and for
// the tree-sitter languages the engine against tree-sitter's own C parse of
// the same files (target <= 1.3x). Every process is run runs times
// interleaved with the others, and each file's fastest run counts, which
// keeps the noise of a shared machine out of the ratios.
func perLanguage(files []string, n, runs int, inspectFile, ctags, tsparse string) {
	groups := map[string][]string{}
	var order []string
	for _, f := range files {
		fm := lang.Lookup(f)
		if fm == nil {
			continue
		}
		key := fm.Language
		if key == "" {
			key = fm.Name
		}
		if groups[key] == nil {
			order = append(order, key)
		}
		groups[key] = append(groups[key], f)
	}
	slices.Sort(order)
	fmt.Printf("one process per file, up to %d files per language, fastest of %d interleaved runs per file\n", n, runs)
	fmt.Printf("  %-10s %5s %8s | %-22s | %-22s | %7s | %-22s | %7s | %-26s | %7s\n",
		"language", "files", "MB", "inspect_file mean/p50", "ctags mean/p50", "ratio", "C parse process mean", "ratio",
		"in-process engine / C parse", "ratio")
	for _, key := range order {
		picked := pick(groups[key], n)
		var size int64
		for _, f := range picked {
			if fi, err := os.Stat(f); err == nil {
				size += fi.Size()
			}
		}
		treeSitter := key == "python" || key == "typescript" || key == "javascript"
		ins := make([]time.Duration, len(picked))
		tag := make([]time.Duration, len(picked))
		cps := make([]time.Duration, len(picked))
		for r := range runs {
			for i, f := range picked {
				keep(&ins[i], r, timeProc(filepath.Dir(f), inspectFile, filepath.Base(f)))
				keep(&tag[i], r, timeProc("", ctags, "-f", "-", f))
				if treeSitter {
					keep(&cps[i], r, timeProc("", tsparse, f))
				}
			}
		}
		line := fmt.Sprintf("  %-10s %5d %8.1f | %8.2f / %6.2f ms    | %8.2f / %6.2f ms    | %6.2fx |",
			key, len(picked), float64(size)/1e6, msMean(ins), ms(pct(ins, 50)), msMean(tag), ms(pct(tag, 50)), msMean(ins)/msMean(tag))
		if treeSitter {
			engine, parse := inProcess(picked, runs, tsparse)
			line += fmt.Sprintf(" %8.2f ms             | %6.2fx | %8.1f / %8.1f ms       | %6.2fx",
				msMean(cps), msMean(ins)/msMean(cps), ms(engine), ms(parse), engine.Seconds()/parse.Seconds())
		} else {
			line += fmt.Sprintf(" %-22s | %7s | %-26s | %7s", "", "", "", "")
		}
		fmt.Println(line)
	}
	fmt.Println("  targets: inspect_file/ctags <= 1.25x for every language; in-process engine / C parse <= 1.3x for tree-sitter languages")
}

// keep records d as the fastest of the runs so far.
func keep(best *time.Duration, run int, d time.Duration) {
	if run == 0 || d < *best {
		*best = d
	}
}

func timeProc(dir, prog string, args ...string) time.Duration {
	c := exec.Command(prog, args...)
	c.Dir = dir
	c.Stdout, c.Stderr = io.Discard, io.Discard
	start := time.Now()
	_ = c.Run() // failures (not_utf8, ...) are timed too
	return time.Since(start)
}

func msMean(ds []time.Duration) float64 {
	var total time.Duration
	for _, d := range ds {
		total += d
	}
	return ms(total) / float64(len(ds))
}

var parseTime = regexp.MustCompile(` in ([0-9.]+)s `)

// inProcess returns the fastest of runs of the engine over files (read,
// outline, encode) and of tree-sitter's C parser alone over the same
// files, each in one process.
func inProcess(files []string, runs int, tsparse string) (engine, parse time.Duration) {
	list, err := os.CreateTemp("", "files")
	if err != nil {
		fatal(err)
	}
	defer os.Remove(list.Name())
	for _, f := range files {
		fmt.Fprintln(list, f)
	}
	list.Close()
	for r := range runs {
		start := time.Now()
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			if d, err := inspect.OutlineSource(context.Background(), f, src); err == nil {
				if res, err := inspect.NewResult(d); err == nil {
					io.Discard.Write(res.AppendJSON(nil))
				}
			}
		}
		keep(&engine, r, time.Since(start))
		out, err := exec.Command(tsparse, "-L", list.Name()).Output()
		m := parseTime.FindSubmatch(out)
		if err != nil || m == nil {
			fatal(fmt.Errorf("%s: %v %q", tsparse, err, out))
		}
		secs, _ := strconv.ParseFloat(string(m[1]), 64)
		keep(&parse, r, time.Duration(secs*float64(time.Second)))
	}
	return engine, parse
}

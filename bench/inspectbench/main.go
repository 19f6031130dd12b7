// Command inspectbench times the inspect engine against universal-ctags
// over the same files in the same run: the engine in this process, ctags
// as one process over the whole list, and both as one process per file on
// a sample. bench/inspect.sh builds it and feeds it the corpora.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/inspect"
)

func main() {
	list := flag.String("files", "", "file with one absolute path per line")
	inspectFile := flag.String("inspect", "", "path of the inspect_file binary")
	ctags := flag.String("ctags", "ctags", "universal-ctags binary")
	runs := flag.Int("runs", 3, "runs of each whole-corpus measurement (the median is reported)")
	sample := flag.Int("sample", 400, "files in the one-process-per-file sample")
	typical := flag.String("typical", "", "comma-separated files of about 500 lines for the single-call latency")
	profile := flag.String("cpuprofile", "", "write a CPU profile of one engine run to this file")
	perLang := flag.Int("perlang", 0, "files per language for issue 10's per-language target (0: skip)")
	tsparse := flag.String("tsparse", "", "tree-sitter C parser (bench/tsparse/parse.c), for -perlang")
	wholeCorpus := flag.Bool("whole", true, "also time the whole corpus in one process (the earlier target)")
	flag.Parse()
	files, err := readList(*list)
	if err != nil {
		fatal(err)
	}
	var size int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			size += fi.Size()
		}
	}
	fmt.Printf("corpus: %d files, %.1f MB\n\n", len(files), float64(size)/1e6)

	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fatal(err)
		}
		pprof.StartCPUProfile(f)
		runEngine(files)
		pprof.StopCPUProfile()
		f.Close()
		byExt(files)
		return
	}

	if *perLang > 0 {
		perLanguage(files, *perLang, *runs, *inspectFile, *ctags, *tsparse)
		fmt.Println()
	}
	if !*wholeCorpus {
		return
	}

	// Whole corpus, in one process each, interleaved run by run.
	var engine, parallel, tags []time.Duration
	workers := runtime.NumCPU()
	var entries, truncated, partial, failed int
	var tagsRSS int64
	for range *runs {
		d, e, tr, p, f := runEngine(files)
		engine = append(engine, d)
		entries, truncated, partial, failed = e, tr, p, f
		parallel = append(parallel, runEngineParallel(files, workers))
		d, err := runCtagsList(*ctags, *list)
		if err != nil {
			fatal(err)
		}
		tags = append(tags, d)
	}
	tagsRSS = peakRSS(*ctags, "--sort=no", "-f", "/dev/null", "-L", *list)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	me, mt := median(engine), median(tags)
	mb := float64(size) / 1e6
	fmt.Printf("whole corpus, one process (median of %d runs)\n", *runs)
	fmt.Printf("  engine  %8.3fs  %8.0f files/s  %6.1f MB/s  peak RSS %5.0f MB  (entries %d, truncated %d, partial %d, failed %d)\n",
		me.Seconds(), float64(len(files))/me.Seconds(), mb/me.Seconds(), float64(ru.Maxrss)/1024, entries, truncated, partial, failed)
	mp := median(parallel)
	fmt.Printf("  engine, %d workers %8.3fs  %8.0f files/s  %6.1f MB/s\n",
		workers, mp.Seconds(), float64(len(files))/mp.Seconds(), mb/mp.Seconds())
	fmt.Printf("  ctags   %8.3fs  %8.0f files/s  %6.1f MB/s  peak RSS %5.0f MB\n",
		mt.Seconds(), float64(len(files))/mt.Seconds(), mb/mt.Seconds(), float64(tagsRSS)/1024)
	fmt.Printf("  ratio engine/ctags: %.2fx single-threaded, %.2fx with %d workers (ctags is single-threaded; target <= 1.5x)\n\n",
		me.Seconds()/mt.Seconds(), mp.Seconds()/mt.Seconds(), workers)

	if *inspectFile != "" && *sample > 0 {
		picked := pick(files, *sample)
		li, lrss := perProcess(picked, func(f string) *exec.Cmd {
			c := exec.Command(*inspectFile, filepath.Base(f))
			c.Dir = filepath.Dir(f)
			return c
		})
		lc, crss := perProcess(picked, func(f string) *exec.Cmd {
			return exec.Command(*ctags, "-f", "-", f)
		})
		fmt.Printf("one process per file (%d sampled files)\n", len(picked))
		report("inspect_file", li, lrss)
		report("ctags", lc, crss)
		fmt.Printf("  ratio p50 inspect_file/ctags: %.2fx\n\n", pct(li, 50).Seconds()/pct(lc, 50).Seconds())
	}

	if *inspectFile != "" && *typical != "" {
		fmt.Println("single inspect_file call on a typical file (50 calls each, target p50 < 10ms)")
		for _, f := range strings.Split(*typical, ",") {
			calls := make([]string, 50)
			for i := range calls {
				calls[i] = f
			}
			l, rss := perProcess(calls, func(f string) *exec.Cmd {
				c := exec.Command(*inspectFile, filepath.Base(f))
				c.Dir = filepath.Dir(f)
				return c
			})
			n := bytes.Count(must(os.ReadFile(f)), []byte("\n"))
			report(fmt.Sprintf("%s (%d lines)", filepath.Base(f), n), l, rss)
		}
	}
}

// runEngine outlines every file and encodes the result, as inspect_file
// does, discarding the output.
func runEngine(files []string) (d time.Duration, entries, truncated, partial, failed int) {
	start := time.Now()
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			failed++
			continue
		}
		data, err := inspect.OutlineSource(context.Background(), f, src)
		if err != nil {
			failed++ // not UTF-8
			continue
		}
		res, err := inspect.NewResult(data)
		if err != nil {
			failed++
			continue
		}
		io.Discard.Write(res.AppendJSON(nil))
		entries += len(res.Data.Outline)
		if res.Truncation != nil {
			truncated++
		}
		if !data.ParseComplete {
			partial++
		}
	}
	return time.Since(start), entries, truncated, partial, failed
}

// runEngineParallel does what runEngine does with several goroutines.
func runEngineParallel(files []string, workers int) time.Duration {
	start := time.Now()
	next := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for f := range next {
				src, err := os.ReadFile(f)
				if err != nil {
					continue
				}
				if data, err := inspect.OutlineSource(context.Background(), f, src); err == nil {
					if res, err := inspect.NewResult(data); err == nil {
						io.Discard.Write(res.AppendJSON(nil))
					}
				}
			}
		})
	}
	for _, f := range files {
		next <- f
	}
	close(next)
	wg.Wait()
	return time.Since(start)
}

func runCtagsList(ctags, list string) (time.Duration, error) {
	c := exec.CommandContext(context.Background(), ctags, "--sort=no", "-f", "-", "-L", list)
	c.Stdout = io.Discard
	start := time.Now()
	err := c.Run()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("ctags: %v", err)
	}
	return d, nil
}

// perProcess times one process per file, then measures the peak RSS of
// each through /usr/bin/time: a child started from Go inherits this
// process's RSS high-water mark (vfork), so its own rusage would overstate.
func perProcess(files []string, mk func(string) *exec.Cmd) ([]time.Duration, int64) {
	var lat []time.Duration
	var rss int64
	for _, f := range files {
		c := mk(f)
		c.Stdout, c.Stderr = io.Discard, io.Discard
		start := time.Now()
		_ = c.Run() // failures (not_utf8, ...) are timed too
		lat = append(lat, time.Since(start))
	}
	for _, f := range files {
		c := mk(f)
		rss = max(rss, peakRSSIn(c.Dir, c.Args[0], c.Args[1:]...))
	}
	return lat, rss
}

func peakRSS(prog string, args ...string) int64 { return peakRSSIn("", prog, args...) }

// peakRSSIn runs prog under GNU time and returns its peak RSS in KiB, or
// -1 when it cannot be measured.
func peakRSSIn(dir, prog string, args ...string) int64 {
	out, err := os.CreateTemp("", "rss")
	if err != nil {
		return -1
	}
	out.Close()
	defer os.Remove(out.Name())
	c := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", out.Name(), prog}, args...)...)
	c.Dir = dir
	c.Stdout, c.Stderr = io.Discard, io.Discard
	_ = c.Run()
	b, err := os.ReadFile(out.Name())
	if err != nil {
		return -1
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	n, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func report(name string, lat []time.Duration, rss int64) {
	var total time.Duration
	for _, l := range lat {
		total += l
	}
	fmt.Printf("  %-28s p50 %6.2fms  p99 %6.2fms  %6.0f files/s  peak RSS %4.0f MB\n",
		name, ms(pct(lat, 50)), ms(pct(lat, 99)), float64(len(lat))/total.Seconds(), float64(rss)/1024)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s) - 1) * p / 100
	return s[i]
}

func median(ds []time.Duration) time.Duration { return pct(ds, 50) }

// pick takes n files spread evenly over the list.
func pick(files []string, n int) []string {
	if n >= len(files) {
		return files
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, files[i*len(files)/n])
	}
	return out
}

func readList(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sc.Text() != "" {
			out = append(out, sc.Text())
		}
	}
	return out, sc.Err()
}

func must[T any](v T, err error) T {
	if err != nil {
		fatal(err)
	}
	return v
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "inspectbench:", err)
	os.Exit(1)
}

// byExt prints the engine's time per extension.
func byExt(files []string) {
	type stat struct {
		files int
		bytes int64
		d     time.Duration
	}
	stats := map[string]*stat{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		start := time.Now()
		if d, err := inspect.OutlineSource(context.Background(), f, src); err == nil {
			inspect.NewResult(d)
		}
		ext := filepath.Ext(f)
		if stats[ext] == nil {
			stats[ext] = &stat{}
		}
		s := stats[ext]
		s.files++
		s.bytes += int64(len(src))
		s.d += time.Since(start)
	}
	for ext, s := range stats {
		fmt.Printf("  %-6s %6d files %8.1f MB %8.3fs %6.1f MB/s\n", ext, s.files, float64(s.bytes)/1e6, s.d.Seconds(), float64(s.bytes)/1e6/s.d.Seconds())
	}
}

package spool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
)

func keep(t *testing.T, s *Store, k Kind, content string) string {
	t.Helper()
	w, err := s.Create(k)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, content)
	id, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func readAll(t *testing.T, s *Store, id string) (*Item, string, error) {
	t.Helper()
	it, err := s.Open(id)
	if err != nil {
		return nil, "", err
	}
	defer it.Close()
	b, err := io.ReadAll(it)
	if err != nil {
		t.Fatal(err)
	}
	return it, string(b), nil
}

func TestRoundTrip(t *testing.T) {
	base := t.TempDir()
	s, err := Open(base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []Kind{Text, Rows} {
		content := "line one\nline two\n" + strings.Repeat("x", 100000) + "\nlast, no LF"
		id := keep(t, s, k, content)
		it, got, err := readAll(t, s, id)
		if err != nil || got != content || it.Kind != k || it.Capped || it.Size != int64(len(content)) {
			t.Fatalf("%s: read back %d bytes (%v), kind %s, capped %v, size %d", k, len(got), err, it.Kind, it.Capped, it.Size)
		}
		fi, err := os.Stat(filepath.Join(s.Dir(), id))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("kept file mode %v: %v", fi.Mode(), err)
		}
	}
	for _, d := range []string{s.Dir(), filepath.Dir(s.Dir())} {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: mode %v, %v", d, fi.Mode(), err)
		}
	}
	if want := filepath.Join(base, fmt.Sprintf("rowkit-%d", os.Geteuid()), "out"); s.Dir() != want {
		t.Fatalf("store in %s, want %s", s.Dir(), want)
	}
	// No temporary file is left behind.
	ents, _ := os.ReadDir(s.Dir())
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestCapped(t *testing.T) {
	s, err := Open(t.TempDir(), Options{MaxItem: 10})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := s.Create(Text)
	w.Write([]byte("0123456"))
	w.Write([]byte("789abcdef"))
	if !w.Capped() {
		t.Fatal("not capped")
	}
	id, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	it, got, err := readAll(t, s, id)
	if err != nil || got != "0123456789" || !it.Capped {
		t.Fatalf("got %q, capped %v, %v", got, it.Capped, err)
	}
}

// An ID says when it was made: one past the age limit is expired, one
// within it that names nothing is not found, a malformed one is not an ID.
func TestExpiredAndUnknown(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s, err := Open(t.TempDir(), Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	id := keep(t, s, Text, "kept\n")
	if made, ok := parseID(id); !ok || !made.Equal(now) {
		t.Fatalf("ID %s made %v, want %v", id, made, now)
	}
	now = now.Add(MaxAge - time.Second)
	if _, got, err := readAll(t, s, id); err != nil || got != "kept\n" {
		t.Fatalf("within the age limit: %q, %v", got, err)
	}
	now = now.Add(2 * time.Second)
	_, _, err = readAll(t, s, id)
	if e, ok := errs.As(err); !ok || e.Code != CodeExpired || !strings.Contains(e.Msg, "@out/"+id+" expired") {
		t.Fatalf("expired: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an expired output is still there: %v", err)
	}
	// Made a minute ago, never kept.
	other := newID(now.Add(-time.Minute))
	_, _, err = readAll(t, s, other)
	if e, ok := errs.As(err); !ok || e.Code != errs.NotFound || !strings.Contains(e.Msg, "not kept here") {
		t.Fatalf("unknown: %v", err)
	}
	for _, bad := range []string{"", "abc", "ABCDEFGHJK", "0000000000/x", "../../etc/x", "0123456789u"} {
		_, _, err = readAll(t, s, bad)
		if e, ok := errs.As(err); !ok || e.Code != errs.NotFound || !strings.Contains(e.Msg, "not the name of a kept output") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestSweep(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s, err := Open(t.TempDir(), Options{Now: func() time.Time { return now }, MaxTotal: 2500})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 5 {
		ids = append(ids, keep(t, s, Text, strings.Repeat(strconv.Itoa(i), 1000)))
		now = now.Add(time.Second)
	}
	// 1,000 bytes (and a header) each within 2,500: the newest two stay.
	for i, id := range ids {
		_, _, err := readAll(t, s, id)
		if kept := err == nil; kept != (i >= 3) {
			t.Errorf("output %d: kept %v (%v)", i, kept, err)
		}
	}
	// A crashed writer's temporary file goes an hour later, and every
	// output once it expires.
	stale, err := os.CreateTemp(s.Dir(), ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	stale.Close()
	old := now.Add(-2 * time.Hour)
	os.Chtimes(stale.Name(), old, old)
	now = now.Add(MaxAge + time.Minute)
	last := keep(t, s, Text, "new")
	ents, _ := os.ReadDir(s.Dir())
	if len(ents) != 1 || ents[0].Name() != last {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("after the sweep: %v, want only %s", names, last)
	}
}

// Nothing but a regular 0600 file of the user's with the store's header is
// read, and the store's directory must be the user's own.
func TestRefused(t *testing.T) {
	base := t.TempDir()
	s, err := Open(base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := keep(t, s, Text, "x")
	p := filepath.Join(s.Dir(), id)
	os.Chmod(p, 0o755)
	if _, _, err := readAll(t, s, id); errs.Code(err) != errs.NotRegular {
		t.Errorf("mode 755: %v", err)
	}
	os.Chmod(p, 0o600)
	link := newID(time.Now())
	os.Symlink(p, filepath.Join(s.Dir(), link))
	if _, _, err := readAll(t, s, link); err == nil {
		t.Errorf("a symbolic link was read")
	}
	fifo := newID(time.Now())
	syscall.Mkfifo(filepath.Join(s.Dir(), fifo), 0o600)
	if _, _, err := readAll(t, s, fifo); errs.Code(err) != errs.NotRegular {
		t.Errorf("a FIFO: %v", err)
	}
	forged := newID(time.Now())
	os.WriteFile(filepath.Join(s.Dir(), forged), []byte("#!/bin/sh\necho hi\n"), 0o600)
	if _, _, err := readAll(t, s, forged); errs.Code(err) != errs.NotRegular {
		t.Errorf("a file without the header: %v", err)
	}

	// A store directory open to others is closed; a symbolic link in its
	// place is refused.
	base2 := t.TempDir()
	top := filepath.Join(base2, fmt.Sprintf("rowkit-%d", os.Geteuid()))
	os.Mkdir(top, 0o777)
	os.Chmod(top, 0o777)
	if _, err := Open(base2, Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(top); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v, not closed", fi.Mode())
	}
	base3 := t.TempDir()
	os.Symlink(t.TempDir(), filepath.Join(base3, fmt.Sprintf("rowkit-%d", os.Geteuid())))
	if _, err := Open(base3, Options{}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a link in place of the directory: %v", err)
	}
}

// The writers of the store are processes: several at once, each keeping
// outputs while the others keep and sweep theirs in a store too small
// for all of them. Every output a writer committed reads back as exactly
// what it wrote, or as not found once swept; no ID is given twice.
func TestConcurrentWriters(t *testing.T) {
	base := t.TempDir()
	const procs, each = 4, 60
	var wg sync.WaitGroup
	outs := make([][]byte, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "SPOOL_WRITER="+strconv.Itoa(p), "SPOOL_BASE="+base, "SPOOL_EACH="+strconv.Itoa(each))
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("writer %d: %v", p, err)
			}
			outs[p] = out
		}()
	}
	// Meanwhile, every output in the store reads back whole: its first
	// word names what was written.
	s, err := Open(base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	reads := 0
	go func() {
		defer close(done)
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
			ents, _ := os.ReadDir(s.Dir())
			for _, e := range ents {
				if _, err := parseIDName(e.Name()); err != nil {
					continue
				}
				_, got, err := readAll(t, s, e.Name())
				if err != nil {
					continue // swept meanwhile
				}
				tag, _, _ := strings.Cut(got, " ")
				if got != writerContent(tag) {
					t.Errorf("%s read while others wrote: %d bytes that are not one output", e.Name(), len(got))
				}
				reads++
			}
			if writersDone.Load() {
				return
			}
		}
	}()
	wg.Wait()
	writersDone.Store(true)
	<-done
	seen := map[string]bool{}
	found := 0
	for p, out := range outs {
		for _, line := range strings.Fields(string(out)) {
			id, tag, ok := strings.Cut(line, "=")
			if !ok {
				continue
			}
			if seen[id] {
				t.Errorf("ID %s given twice", id)
			}
			seen[id] = true
			_, got, err := readAll(t, s, id)
			switch {
			case errs.Code(err) == errs.NotFound:
			case err != nil:
				t.Errorf("writer %d, %s: %v", p, id, err)
			case got != writerContent(tag):
				t.Errorf("writer %d, %s: read %d bytes that are not what was kept", p, id, len(got))
			default:
				found++
			}
		}
	}
	if len(seen) != procs*each || found == 0 {
		t.Fatalf("%d IDs committed, %d still readable", len(seen), found)
	}
	t.Logf("%d outputs kept by %d processes, %d still readable; %d read while they wrote", len(seen), procs, found, reads)
}

var writersDone atomic.Bool

func parseIDName(name string) (time.Time, error) {
	if t, ok := parseID(name); ok {
		return t, nil
	}
	return time.Time{}, errors.New("not an ID")
}

func writerContent(tag string) string {
	n, _ := strconv.Atoi(strings.Split(tag, "-")[1])
	return strings.Repeat(tag+" ", 200+n*37%4000) + "\n"
}

// TestMain runs this binary as a writer process of the tests below when
// they start it so.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("SPOOL_WRITER") != "":
		writer(os.Getenv("SPOOL_WRITER"))
	case os.Getenv("SPOOL_CRASH") != "":
		crashingWriter(os.Getenv("SPOOL_CRASH"))
	}
	os.Exit(m.Run())
}

// writer is one writer of TestConcurrentWriters.
func writer(p string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	n, _ := strconv.Atoi(os.Getenv("SPOOL_EACH"))
	s, err := Open(os.Getenv("SPOOL_BASE"), Options{MaxTotal: 200 << 10})
	if err != nil {
		fail(err)
	}
	for i := range n {
		tag := p + "-" + strconv.Itoa(i)
		w, err := s.Create(Text)
		if err != nil {
			fail(err)
		}
		// In pieces, so that writers interleave.
		c := writerContent(tag)
		for len(c) > 0 {
			k := min(len(c), 777)
			w.Write([]byte(c[:k]))
			c = c[k:]
		}
		id, err := w.Commit()
		if err != nil {
			fail(err)
		}
		fmt.Printf("%s=%s\n", id, tag)
	}
	os.Exit(0)
}

// crashingWriter writes an output until it is killed.
func crashingWriter(base string) {
	s, err := Open(base, Options{})
	if err != nil {
		os.Exit(3)
	}
	w, _ := s.Create(Text)
	for {
		w.Write(bytes.Repeat([]byte("partial\n"), 512))
		time.Sleep(time.Millisecond)
	}
}

// A writer killed while it writes leaves no output under an ID, only a
// temporary file, which a later sweep removes once it is stale.
func TestCrashingWriter(t *testing.T) {
	base := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0])
	cmd.Env = append(os.Environ(), "SPOOL_CRASH="+base)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until it has written something, then kill it mid-write.
	var temp string
	for temp == "" && ctx.Err() == nil {
		ents, _ := os.ReadDir(s.Dir())
		for _, e := range ents {
			if fi, err := e.Info(); err == nil && fi.Size() > 64<<10 {
				temp = e.Name()
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !strings.HasPrefix(temp, ".tmp-") {
		t.Fatalf("the writer's file is %q", temp)
	}
	// Another writer's sweep leaves the fresh temporary file alone, and
	// removes it once stale.
	keep(t, s, Text, "x")
	if _, err := os.Stat(filepath.Join(s.Dir(), temp)); err != nil {
		t.Fatalf("a fresh temporary file was swept: %v", err)
	}
	later, err := Open(base, Options{Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	keep(t, later, Text, "y")
	if _, err := os.Stat(filepath.Join(s.Dir(), temp)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the crashed writer's file is still there: %v", err)
	}
}

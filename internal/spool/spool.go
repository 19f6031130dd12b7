// Package spool owns the store of kept outputs: when a bound leaves part
// of an output out (the middle of a shell script's output, the rows past
// the token rule), the whole output is kept here under a short name, so
// that an agent reads on from it (hread @out/ID START:) instead of running
// the command again, which costs a turn and may not print the same.
//
// The store is a directory of the user's own outside any workspace,
// TMPDIR/rowkit-UID/out (0700, refused unless it is the user's and no one
// else may write to it), shared by every rowkit process of the user: the
// router's shell, the shell names, the MCP server. TMPDIR, not the home:
// Codex's sandbox lets a command write there and in its workspace only.
// Each output is one file, 0600, written under a temporary name and linked
// into place whole, so a reader never sees a part of one and a writer that
// crashes leaves only a temporary file, swept an hour later. Files are
// only ever read: nothing in the store is run, and a file that is not a
// regular file of the user's, 0600, is refused.
//
// The store is bounded by age and size: an output is kept for MaxAge,
// each is kept up to MaxItem bytes (the rest is dropped and the item says
// so), and the store as a whole stays within MaxTotal, the oldest outputs
// dropped first. An ID names its creation time, so a name that expired is
// told from one that never existed.
package spool

import (
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
)

// The store's bounds.
const (
	// MaxAge is how long an output is kept.
	MaxAge = 24 * time.Hour
	// MaxItem is how much of one output is kept.
	MaxItem = 32 << 20
	// MaxTotal is the most the store holds in all.
	MaxTotal = 256 << 20
	// staleTemp is how old a temporary file must be before a sweep takes
	// it for a crashed writer's.
	staleTemp = time.Hour
)

// Prefix is how a kept output is named where a path could stand:
// @out/ID.
const Prefix = "@out/"

// CodeExpired is the error of an ID whose output was kept longer ago than
// MaxAge: it is gone. An ID that names nothing kept is errs.NotFound.
const CodeExpired = "expired"

// Kind is what an output holds, which decides how it is read back.
type Kind string

const (
	// Text is an output as a program printed it: read back as numbered
	// lines, N|TEXT.
	Text Kind = "text"
	// Rows is an output of whole lines that are already rows (hgrep's
	// verified rows, an outline's entries): read back as they are.
	Rows Kind = "rows"
)

// Options change the store's bounds, for tests.
type Options struct {
	MaxAge   time.Duration
	MaxItem  int64
	MaxTotal int64
	Now      func() time.Time
}

// Store is the store of kept outputs in one directory.
type Store struct {
	dir      string
	maxAge   time.Duration
	maxItem  int64
	maxTotal int64
	now      func() time.Time
}

// Base is the directory the store lives under: TMPDIR when it is an
// absolute path, else /tmp. lookup finds an environment variable.
func Base(lookup func(string) (string, bool)) string {
	if lookup != nil {
		if v, ok := lookup("TMPDIR"); ok && filepath.IsAbs(v) {
			return v
		}
	}
	return "/tmp"
}

// Open opens the store under base (Base), making it when missing. It
// fails when the directory cannot be made or is not the user's alone.
func Open(base string, o Options) (*Store, error) {
	top, err := UserDir(base)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(top, "out")
	if err := private(dir); err != nil {
		return nil, err
	}
	s := &Store{dir: dir, maxAge: MaxAge, maxItem: MaxItem, maxTotal: MaxTotal, now: time.Now}
	if o.MaxAge > 0 {
		s.maxAge = o.MaxAge
	}
	if o.MaxItem > 0 {
		s.maxItem = o.MaxItem
	}
	if o.MaxTotal > 0 {
		s.maxTotal = o.MaxTotal
	}
	if o.Now != nil {
		s.now = o.Now
	}
	return s, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// UserDir is base/rowkit-UID: made if missing, refused unless it is a
// directory of this user's that no one else may write to.
func UserDir(base string) (string, error) {
	top := filepath.Join(base, fmt.Sprintf("rowkit-%d", os.Geteuid()))
	return top, private(top)
}

// private makes dir (0700) if missing and checks that it is a directory
// of this user's that no one else may write to, closing it if it is the
// user's but open to others.
func private(dir string) error {
	uid := os.Geteuid()
	err := os.Mkdir(dir, 0o700)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return errs.Errorf(errs.Write, "cannot make %s: %v; set TMPDIR to a directory of your own", dir, errors.Unwrap(err))
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return errs.Errorf(errs.Write, "cannot use %s: %v", dir, errors.Unwrap(err))
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return errs.Errorf(errs.Write, "%s is not a directory (a symbolic link or a file is in its place): remove it, or set TMPDIR to a directory of your own", dir)
	case st == nil || int(st.Uid) != uid:
		owner := -1
		if st != nil {
			owner = int(st.Uid)
		}
		return errs.Errorf(errs.Write, "%s belongs to user %d, not to you (user %d): remove it, or set TMPDIR to a directory of your own", dir, owner, uid)
	case fi.Mode().Perm()&0o077 != 0:
		if err := os.Chmod(dir, 0o700); err != nil {
			return errs.Errorf(errs.Write, "%s may be used by others and cannot be closed: %v", dir, errors.Unwrap(err))
		}
	}
	return nil
}

// An ID is ten characters of a lower-case base-32 alphabet without the
// letters that read as digits (Crockford's): six for the second it was
// made, counted from epoch (30 bits, 34 years), four random (20 bits), so
// that IDs made in one second differ and none can be guessed from
// another.
const (
	alphabet   = "0123456789abcdefghjkmnpqrstvwxyz"
	idLen      = IDLen
	timeDigits = 6
)

// IDLen is the length of an ID: what a caller reserves for the name of an
// output it has yet to keep.
const IDLen = 10

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// newID is an ID made at t.
func newID(t time.Time) string {
	var b [idLen]byte
	secs := uint64(max(t.Sub(epoch)/time.Second, 0))
	for i := timeDigits - 1; i >= 0; i-- {
		b[i] = alphabet[secs&31]
		secs >>= 5
	}
	var r [idLen - timeDigits]byte
	rand.Read(r[:])
	for i, c := range r {
		b[timeDigits+i] = alphabet[c&31]
	}
	return string(b[:])
}

// parseID returns when id was made; ok is false when id is not an ID.
func parseID(id string) (time.Time, bool) {
	if len(id) != idLen {
		return time.Time{}, false
	}
	var secs uint64
	for i := 0; i < idLen; i++ {
		d := strings.IndexByte(alphabet, id[i])
		if d < 0 {
			return time.Time{}, false
		}
		if i < timeDigits {
			secs = secs<<5 | uint64(d)
		}
	}
	return epoch.Add(time.Duration(secs) * time.Second), true
}

// header starts every kept file: the format, the kind and whether the
// output was kept whole or only its first part. Its length is
// fixed, so Commit writes it in place once it knows.
func header(k Kind, capped bool) string {
	h := "rowkit-kept 1 " + string(k) // text and rows are four letters each
	if capped {
		return h + " capped\n"
	}
	return h + " whole \n"
}

var headerLen = len(header(Text, false))

// Writer is an output being kept. Write takes every byte and keeps the
// first MaxItem of them; Commit makes the output readable under its ID.
type Writer struct {
	s      *Store
	f      *os.File
	buf    *bufio.Writer // over f: a search keeps its rows one at a time
	kind   Kind
	n      int64 // bytes kept
	capped bool  // bytes were dropped past maxItem
	err    error
}

// Create starts keeping an output of kind k.
func (s *Store) Create(k Kind) (*Writer, error) {
	f, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return nil, errs.Errorf(errs.Write, "cannot keep the output in %s: %v", s.dir, errors.Unwrap(err))
	}
	w := &Writer{s: s, f: f, buf: bufio.NewWriterSize(f, 64<<10), kind: k}
	if _, err := f.WriteString(header(k, false)); err != nil {
		w.Abort()
		return nil, errs.Errorf(errs.Write, "cannot keep the output in %s: %v", s.dir, errors.Unwrap(err))
	}
	return w, nil
}

// Write keeps p, or what of it fits MaxItem. It never fails: a writer
// that could not keep something says so at Commit.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil || w.capped {
		return len(p), nil
	}
	q := p
	if room := w.s.maxItem - w.n; int64(len(q)) > room {
		q, w.capped = q[:room], true
	}
	n, err := w.buf.Write(q)
	w.n += int64(n)
	if err != nil {
		w.err = err
	}
	return len(p), nil
}

// Capped reports whether the output passed MaxItem, or its writer
// stopped keeping it (Stop): only its first part is kept.
func (w *Writer) Capped() bool { return w.capped }

// Stop ends what is kept of an output that goes on: its writer keeps it
// bounded more tightly than MaxItem (a search's rows). Later writes are
// dropped, and the output is kept as capped.
func (w *Writer) Stop() { w.capped = true }

// Commit makes the output readable as @out/ID and returns ID. The store
// is swept of expired outputs, of temporary files crashed writers left,
// and of its oldest outputs while it holds more than MaxTotal.
func (w *Writer) Commit() (string, error) {
	defer w.Abort()
	fail := func(err error) (string, error) {
		return "", errs.Errorf(errs.Write, "cannot keep the output in %s: %v", w.s.dir, err)
	}
	if w.err == nil {
		w.err = w.buf.Flush()
	}
	if w.err != nil {
		return fail(w.err)
	}
	if w.capped {
		if _, err := w.f.WriteAt([]byte(header(w.kind, true)), 0); err != nil {
			return fail(err)
		}
	}
	if err := w.f.Close(); err != nil {
		return fail(err)
	}
	// A link fails rather than replace an output another writer made
	// under the same ID in the same second: draw again.
	for range 8 {
		id := newID(w.s.now())
		err := os.Link(w.f.Name(), filepath.Join(w.s.dir, id))
		if err == nil {
			w.s.sweep(id)
			return id, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fail(errors.Unwrap(err))
		}
	}
	return fail(errors.New("no free name"))
}

// Abort drops the output. After Commit it only removes the temporary
// name.
func (w *Writer) Abort() {
	if w.f != nil {
		w.f.Close()
		os.Remove(w.f.Name())
	}
}

// sweep removes expired outputs and stale temporary files, then the
// oldest outputs while the store holds more than maxTotal; never keep,
// the one just made. Sweeps run at once in several processes: what one
// removes another finds gone, which is no error.
func (s *Store) sweep(keep string) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	type item struct {
		name string
		made time.Time
		size int64
	}
	var items []item
	var total int64
	now := s.now()
	for _, e := range ents {
		name := e.Name()
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		if strings.HasPrefix(name, ".tmp-") {
			if now.Sub(fi.ModTime()) > staleTemp {
				os.Remove(filepath.Join(s.dir, name))
			}
			continue
		}
		made, ok := parseID(name)
		switch {
		case !ok:
			continue // not the store's
		case now.Sub(made) > s.maxAge:
			os.Remove(filepath.Join(s.dir, name))
			continue
		}
		items = append(items, item{name, made, fi.Size()})
		total += fi.Size()
	}
	if total <= s.maxTotal {
		return
	}
	sort.Slice(items, func(i, j int) bool { return items[i].made.Before(items[j].made) })
	for _, it := range items {
		if total <= s.maxTotal {
			break
		}
		if it.name == keep {
			continue
		}
		if os.Remove(filepath.Join(s.dir, it.name)) == nil {
			total -= it.size
		}
	}
}

// Item is a kept output opened for reading.
type Item struct {
	ID   string
	Kind Kind
	// Capped says that only the output's first Size bytes were kept
	// (MaxItem, or less when its writer stopped).
	Capped bool
	// Size is the size of the content in bytes.
	Size int64
	f    *os.File
}

// Read reads the content.
func (it *Item) Read(p []byte) (int, error) { return it.f.Read(p) }

// Close closes the item.
func (it *Item) Close() error { return it.f.Close() }

// Name is how the item is named where a path could stand: @out/ID.
func (it *Item) Name() string { return Prefix + it.ID }

// Open opens the output kept as id (without the @out/ prefix). An id
// whose output was made longer than MaxAge ago is CodeExpired; one that
// names nothing kept (never made, or dropped to keep the store within
// MaxTotal) is errs.NotFound.
func (s *Store) Open(id string) (*Item, error) {
	made, ok := parseID(id)
	if !ok {
		return nil, errs.Errorf(errs.NotFound, "%s%s is not the name of a kept output (an ID is %d characters of 0-9 and a-z)", Prefix, id, idLen)
	}
	if age := s.now().Sub(made); age > s.maxAge {
		os.Remove(filepath.Join(s.dir, id))
		return nil, errs.Errorf(CodeExpired, "%s%s expired: it was kept at %s, and outputs are kept for %s; run the command again",
			Prefix, id, made.UTC().Format("2006-01-02 15:04 UTC"), hours(s.maxAge))
	}
	p := filepath.Join(s.dir, id)
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errs.Errorf(errs.NotFound, "%s%s is not kept here: no output of that name (the store keeps the newest %s MiB of outputs, so an old one may have been dropped); run the command again",
			Prefix, id, errs.Thousands(int(s.maxTotal>>20)))
	}
	if err != nil {
		return nil, errs.Errorf(errs.Read, "%s%s: %v", Prefix, id, errors.Unwrap(err))
	}
	it, err := s.check(f, id)
	if err != nil {
		f.Close()
		return nil, err
	}
	return it, nil
}

// hours is d in words.
func hours(d time.Duration) string {
	if d%time.Hour == 0 {
		if d == time.Hour {
			return "1 hour"
		}
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return d.String()
}

// check refuses a file that is not one the store wrote: a regular file of
// the user's, 0600, with a header.
func (s *Store) check(f *os.File, id string) (*Item, error) {
	bad := func(why string) error {
		return errs.Errorf(errs.NotRegular, "%s%s is not a kept output: %s", Prefix, id, why)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, errs.Errorf(errs.Read, "%s%s: %v", Prefix, id, errors.Unwrap(err))
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return nil, bad("not a regular file")
	case st == nil || int(st.Uid) != os.Geteuid():
		return nil, bad("not the user's")
	case fi.Mode().Perm() != 0o600:
		return nil, bad(fmt.Sprintf("mode %o, not 600", fi.Mode().Perm()))
	}
	h := make([]byte, headerLen)
	if _, err := io.ReadFull(f, h); err != nil {
		return nil, bad("no header")
	}
	it := &Item{ID: id, Size: fi.Size() - int64(headerLen), f: f}
	switch string(h) {
	case header(Text, false):
		it.Kind = Text
	case header(Text, true):
		it.Kind, it.Capped = Text, true
	case header(Rows, false):
		it.Kind = Rows
	case header(Rows, true):
		it.Kind, it.Capped = Rows, true
	default:
		return nil, bad("an unknown header")
	}
	return it, nil
}

// IsRef reports whether path names a kept output (@out/ID), and returns
// the ID.
func IsRef(path string) (string, bool) {
	return strings.CutPrefix(path, Prefix)
}

package lsp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// File change types of workspace/didChangeWatchedFiles.
const (
	FileCreated = 1
	FileChanged = 2
	FileDeleted = 3
)

// FileEvent is one change of a file, as the server is told.
type FileEvent struct {
	URI  string `json:"uri"`
	Type int    `json:"type"`
}

// Change is one change the Watcher saw, numbered in the order seen.
type Change struct {
	Seq  uint64
	Path string // absolute
	Type int
	Dir  bool // the path is a directory (created, deleted or moved)
}

// maxLog bounds the changes a Watcher keeps. A reader that fell further
// behind than this is told it lost track (Since's ok false) and must start
// over, as after a kernel queue overflow.
const maxLog = 1 << 16

// watchMask is what the kernel reports: every way a file's content or
// existence changes. Attribute changes are left out: a touch changes no
// answer.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// Watcher follows every change below a directory with inotify: language
// servers rely on their client to be told when files change on disk
// (gopls, pyright and TypeScript 7 all register for
// workspace/didChangeWatchedFiles), and a long-lived server that is not
// told answers from files as they were.
//
// Directories named in Skip are not watched (.git, node_modules: many
// directories, no source of the workspace's own). A kernel queue overflow,
// or a directory that could not be watched, makes the Watcher lost
// (Lost): its readers must assume anything changed.
type Watcher struct {
	root string
	skip func(name string) bool
	fd   int

	mu      sync.Mutex
	dirs    map[int32]string // watch descriptor -> directory
	log     []Change         // the last maxLog changes
	seq     uint64           // the last change's Seq
	lost    uint64           // the Seq at which track was lost last (0: never)
	gone    bool             // the root itself was deleted or moved
	exts    map[string]bool  // file extensions seen (lower case, with the dot)
	closed  bool
	stop    chan struct{}
	stopped chan struct{}
}

// Watch starts watching root and every directory below it whose name skip
// does not refuse. It walks the tree once, which also records the file
// extensions present (Exts).
func Watch(root string, skip func(name string) bool) (*Watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	w := &Watcher{root: root, skip: skip, fd: fd, dirs: map[int32]string{}, exts: map[string]bool{},
		stop: make(chan struct{}), stopped: make(chan struct{})}
	w.mu.Lock()
	err = w.addTree(root, false)
	w.mu.Unlock()
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	go w.run()
	return w, nil
}

// Root is the directory watched.
func (w *Watcher) Root() string { return w.root }

// Exts reports the file extensions seen below the root (lower case, with
// the dot), at the start and in files created since.
func (w *Watcher) Exts() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]bool, len(w.exts))
	for k := range w.exts {
		out[k] = true
	}
	return out
}

// addTree watches dir and the directories below it; with report, every
// file found is logged as created (a directory made, or moved in, with
// files already in it). w.mu is held.
func (w *Watcher) addTree(dir string, report bool) error {
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return nil // gone already
		}
		return os.NewSyscallError("inotify_add_watch "+dir, err)
	}
	w.dirs[int32(wd)] = dir
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // gone, or unreadable: its events still come
	}
	for _, e := range ents {
		p := dir + "/" + e.Name()
		if e.IsDir() {
			if w.skip != nil && w.skip(e.Name()) {
				continue
			}
			if err := w.addTree(p, report); err != nil {
				return err
			}
			continue
		}
		w.noteExt(e.Name())
		if report {
			w.append(p, FileCreated, false)
		}
	}
	return nil
}

func (w *Watcher) noteExt(name string) {
	if ext := strings.ToLower(filepath.Ext(name)); ext != "" && len(w.exts) < 1024 {
		w.exts[ext] = true
	}
}

// append logs one change; w.mu is held.
func (w *Watcher) append(path string, typ int, dir bool) {
	w.seq++
	if len(w.log) == maxLog {
		n := copy(w.log, w.log[maxLog/2:])
		w.log = w.log[:n]
	}
	w.log = append(w.log, Change{Seq: w.seq, Path: path, Type: typ, Dir: dir})
}

// loseTrack records that changes may have been missed.
func (w *Watcher) loseTrack() {
	w.seq++
	w.lost = w.seq
}

func (w *Watcher) run() {
	defer close(w.stopped)
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		n, err := unix.Poll(fds, 200)
		if err != nil && !errors.Is(err, unix.EINTR) {
			w.mu.Lock()
			w.loseTrack()
			w.mu.Unlock()
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if n > 0 {
			w.Sync()
		}
	}
}

// Sync reads every event the kernel has queued so far: once it returns,
// every change made before it was called is in the log. Readers call it
// before they look, so that an edit made just before a query is never
// missed.
func (w *Watcher) Sync() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	var buf [64 << 10]byte
	for {
		n, err := unix.Read(w.fd, buf[:])
		if err != nil || n <= 0 {
			if err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
				w.loseTrack()
			}
			return
		}
		w.parse(buf[:n])
	}
}

// parse handles a buffer of inotify events; w.mu is held.
func (w *Watcher) parse(b []byte) {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		size := unix.SizeofInotifyEvent + int(ev.Len)
		if size > len(b) {
			return
		}
		name := ""
		if ev.Len > 0 {
			raw := b[unix.SizeofInotifyEvent:size]
			if i := indexNUL(raw); i >= 0 {
				raw = raw[:i]
			}
			name = string(raw)
		}
		b = b[size:]
		w.handle(ev.Wd, ev.Mask, name)
	}
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

func (w *Watcher) handle(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		w.loseTrack()
		return
	}
	dir, ok := w.dirs[wd]
	if mask&unix.IN_IGNORED != 0 {
		delete(w.dirs, wd)
		return
	}
	if !ok {
		return
	}
	if mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
		if dir == w.root {
			w.gone = true
		}
		return
	}
	if name == "" {
		return
	}
	p := dir + "/" + name
	isDir := mask&unix.IN_ISDIR != 0
	switch {
	case isDir && mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		if w.skip != nil && w.skip(name) {
			return
		}
		w.append(p, FileCreated, true)
		if err := w.addTree(p, true); err != nil {
			w.loseTrack()
		}
	case isDir && mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) != 0:
		if w.skip != nil && w.skip(name) {
			return
		}
		w.append(p, FileDeleted, true)
	case isDir:
	case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		w.noteExt(name)
		w.append(p, FileCreated, false)
	case mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) != 0:
		w.append(p, FileDeleted, false)
	case mask&(unix.IN_MODIFY|unix.IN_CLOSE_WRITE) != 0:
		w.append(p, FileChanged, false)
	}
}

// Seq is the number of the last change seen (after a Sync).
func (w *Watcher) Seq() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seq
}

// Since returns the changes after seq, the Seq to ask from next time, and
// whether the log still covers them all: false when track was lost after
// seq (a queue overflow) or the changes since are older than the log
// keeps. It does not Sync.
func (w *Watcher) Since(seq uint64) (changes []Change, next uint64, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lost > seq || len(w.log) > 0 && w.log[0].Seq > seq+1 && w.seq > seq {
		return nil, w.seq, false
	}
	for i := len(w.log) - 1; i >= 0 && w.log[i].Seq > seq; i-- {
		changes = append(changes, w.log[i])
	}
	for i, j := 0, len(changes)-1; i < j; i, j = i+1, j-1 {
		changes[i], changes[j] = changes[j], changes[i]
	}
	return changes, w.seq, true
}

// Gone reports whether the root directory itself was deleted or moved.
func (w *Watcher) Gone() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gone
}

// Close stops watching.
func (w *Watcher) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.stopped
	unix.Close(w.fd)
}

// Coalesce turns a run of changes into the events a server is told: one
// per file, its net effect (created then changed is created; created then
// deleted is nothing; deleted then created is changed). Directory
// changes are kept as they are.
func Coalesce(changes []Change) []FileEvent {
	type state struct {
		first, last int
		order       int
	}
	byPath := map[string]*state{}
	var order []string
	for _, c := range changes {
		s, ok := byPath[c.Path]
		if !ok {
			s = &state{first: c.Type, order: len(order)}
			byPath[c.Path] = s
			order = append(order, c.Path)
		}
		s.last = c.Type
	}
	out := make([]FileEvent, 0, len(order))
	for _, p := range order {
		s := byPath[p]
		t := s.last
		switch {
		case s.first == FileCreated && s.last == FileDeleted:
			continue
		case s.first == FileCreated:
			t = FileCreated
		case s.first == FileDeleted && s.last != FileDeleted:
			t = FileChanged
		}
		out = append(out, FileEvent{URI: URI(p), Type: t})
	}
	return out
}

package symbol

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/proc"
	"github.com/rowkit/rowkit/internal/rows"
	"github.com/rowkit/rowkit/internal/workspace"
)

// The broker keeps a workspace's language servers alive for the shell
// commands: each hsymbol call is a process of its own, and a server per
// call would pay its start (and gopls's or pyright's whole workspace load)
// every time. The first call in a workspace starts the broker, detached on
// purpose (a session of its own, so that the shell's clean-up of the
// call's process group does not end it); later calls reach it through a
// Unix socket. It ends itself after BrokerIdle without a query, when the
// workspace's root is deleted or replaced, or when a call from another
// rowkit binary finds it (its protocol may differ).
//
// Exactly one broker serves a workspace: a broker runs only while it holds
// an exclusive lock (flock) on the workspace's lock file, and it listens
// only once it does. Calls that race to start one each start a process;
// all but the first to take the lock exit at once, and every call
// connects to the one that listens.

// DefaultBrokerIdle is how long a broker waits for a query before it exits.
const DefaultBrokerIdle = 10 * time.Minute

// BrokerDirEnv names the variable that moves the brokers' directory.
const BrokerDirEnv = "ROWKIT_BROKER_DIR"

// BrokerIdleEnv names the variable that sets a new broker's idle time (a
// Go duration such as 30s or 10m).
const BrokerIdleEnv = "ROWKIT_SYMBOL_IDLE"

// brokerProtocol is the version of the messages below.
const brokerProtocol = 1

// brokerStart bounds how long a call waits for a broker to listen.
const brokerStart = 15 * time.Second

// BrokerDir is the private directory of a user's brokers: $ROWKIT_BROKER_DIR;
// else $XDG_RUNTIME_DIR/rowkit; else $TMPDIR (or /tmp)/rowkit-UID. It is
// made mode 0700 when missing, and refused unless it is a directory (not
// a link) owned by this user that no one else may enter.
func BrokerDir(env proc.Lookup) (string, error) {
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	uid := os.Getuid()
	dir := ""
	if v, ok := env(BrokerDirEnv); ok && filepath.IsAbs(v) {
		dir = v
	} else if v, ok := env("XDG_RUNTIME_DIR"); ok && filepath.IsAbs(v) {
		if fi, err := os.Stat(v); err == nil && fi.IsDir() && owner(fi) == uid {
			dir = filepath.Join(v, "rowkit")
		}
	}
	if dir == "" {
		tmp := "/tmp"
		if v, ok := env("TMPDIR"); ok && filepath.IsAbs(v) {
			tmp = v
		}
		dir = filepath.Join(tmp, "rowkit-"+strconv.Itoa(uid))
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", errs.Errorf(CodeBroker, "cannot make the broker directory %s: %v", dir, err)
	}
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return "", errs.Errorf(CodeBroker, "the broker directory %s: %v", dir, err)
	case !fi.IsDir():
		return "", errs.Errorf(CodeBroker, "the broker directory %s is not a directory", dir)
	case owner(fi) != uid || fi.Mode().Perm()&0o077 != 0:
		return "", errs.Errorf(CodeBroker, "the broker directory %s is not private to this user (owner %d, mode %v); remove it, or set %s", dir, owner(fi), fi.Mode().Perm(), BrokerDirEnv)
	}
	return dir, nil
}

func owner(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// brokerStem is the name of a workspace's socket, lock and log in the
// broker directory, without extension: a hash of the canonical root.
func brokerStem(dir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, "symbol-"+hex.EncodeToString(sum[:8]))
}

// Identity names the binary a process runs: a broker answers only calls
// from the same binary (path, device, inode, size and time), since a
// rebuilt rowkit may speak another protocol.
func Identity(exe string) string {
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if st == nil {
		return fi.ModTime().String()
	}
	return fmt.Sprintf("%d:%d:%d:%d", st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano())
}

// brokerRequest is one call's message to the broker: one JSON line.
type brokerRequest struct {
	Protocol int         `json:"protocol"`
	Identity string      `json:"identity"`
	Root     string      `json:"root"`
	Request  Request     `json:"request"`
	Budget   rows.Budget `json:"budget"`
}

// brokerReply is the broker's answer: a result, or the error a query
// returned, with what an error carries.
type brokerReply struct {
	Stale  bool    `json:"stale,omitempty"` // another binary's broker: it is exiting
	Result *Result `json:"result,omitempty"`
	// Left and LeftCapped are the result's (never in its own JSON).
	Left       []byte       `json:"left,omitempty"`
	LeftCapped bool         `json:"left_capped,omitempty"`
	Error      *brokerError `json:"error,omitempty"`
}

type brokerError struct {
	Code    string        `json:"code"`
	Msg     string        `json:"msg"`
	Hint    string        `json:"hint,omitempty"`
	Exit    int           `json:"exit,omitempty"`
	Path    string        `json:"path,omitempty"`
	Context []rows.Record `json:"context,omitempty"`
}

func replyError(err error) *brokerError {
	e, ok := errs.As(err)
	if !ok {
		e = errs.Errorf(CodeBroker, "%v", err)
	}
	be := &brokerError{Code: e.Code, Msg: e.Msg, Hint: e.Hint, Exit: e.Exit}
	var re *RowError
	if errors.As(err, &re) {
		be.Path, be.Context = re.Path, re.Context
	}
	return be
}

func (be *brokerError) err() error {
	e := &errs.Error{Code: be.Code, Msg: be.Msg, Hint: be.Hint, Exit: be.Exit}
	if be.Context != nil {
		return &RowError{Err: e, Path: be.Path, Context: be.Context}
	}
	return e
}

// Broker is how a shell command reaches the broker of its workspace.
type Broker struct {
	Env proc.Lookup
	// Executable is rowkit's binary, run as "rowkit symbol --broker ROOT"
	// to start a broker; Identity is that binary's.
	Executable string
}

// Query asks the broker of root (canonical) for r, starting the broker
// when none listens. A broker that ends before it answers (killed, say)
// is started again once.
func (b *Broker) Query(ctx context.Context, root string, r Request, budget rows.Budget) (*Result, error) {
	dir, err := BrokerDir(b.Env)
	if err != nil {
		return nil, err
	}
	stem := brokerStem(dir, root)
	id := Identity(b.Executable)
	msg, _ := json.Marshal(brokerRequest{Protocol: brokerProtocol, Identity: id, Root: root, Request: r, Budget: budget})
	msg = append(msg, '\n')
	for try := 0; ; try++ {
		conn, err := b.connect(ctx, stem, root)
		if err != nil {
			return nil, err
		}
		reply, err := exchange(ctx, conn, msg)
		if err != nil {
			if ctx.Err() != nil {
				return nil, cancelled(ctx)
			}
			if try < 3 {
				// The broker ended before it answered: again, with a new
				// one. A dying broker's listening socket can outlast the
				// connection it just reset by a moment, so a redial at
				// once may reach it and be reset too: wait a little more
				// each time (seen 1 in 15 with a broker killed mid-call).
				select {
				case <-ctx.Done():
					return nil, cancelled(ctx)
				case <-time.After(time.Duration(try+1) * 100 * time.Millisecond):
				}
				continue
			}
			return nil, errs.Errorf(CodeBroker, "the symbol broker of %s ended before it answered (%v); its log: %s.log", root, err, stem).
				WithHint("run the command again")
		}
		switch {
		case reply.Stale:
			if try < 3 {
				continue
			}
			return nil, errs.Errorf(CodeBroker, "the symbol broker of %s keeps answering as another rowkit binary", root)
		case reply.Error != nil:
			return nil, reply.Error.err()
		case reply.Result == nil:
			return nil, errs.Errorf(CodeBroker, "the symbol broker of %s sent an empty answer", root)
		}
		reply.Result.Left, reply.Result.LeftCapped = reply.Left, reply.LeftCapped
		return reply.Result, nil
	}
}

// exchange sends msg and reads the reply. Cancelling ctx closes the
// connection, which cancels the query in the broker.
func exchange(ctx context.Context, conn net.Conn, msg []byte) (*brokerReply, error) {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := conn.Write(msg); err != nil {
		return nil, err
	}
	line, err := bufio.NewReaderSize(conn, 64<<10).ReadBytes('\n')
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	var reply brokerReply
	if err := json.Unmarshal(line, &reply); err != nil {
		return nil, fmt.Errorf("unreadable answer: %v", err)
	}
	return &reply, nil
}

// connect reaches the broker of root, starting one when none listens,
// and waits until one does.
func (b *Broker) connect(ctx context.Context, stem, root string) (net.Conn, error) {
	deadline := time.Now().Add(brokerStart)
	var lastStart time.Time
	for {
		conn, err := net.Dial("unix", stem+".sock")
		if err == nil {
			return conn, nil
		}
		if time.Now().After(deadline) {
			return nil, errs.Errorf(CodeBroker, "no symbol broker listens for %s after %s (%v); its log: %s.log", root, brokerStart, err, stem).
				WithHint("run the command again, or with --no-broker")
		}
		// None listens: start one (again every half second, in case the
		// one started lost the race to a broker that was exiting).
		if time.Since(lastStart) > 500*time.Millisecond {
			lastStart = time.Now()
			if err := b.start(root); err != nil {
				return nil, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, cancelled(ctx)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// CallerEnv is what of a caller's environment its query sends the broker:
// what a server needs to be found and run.
func CallerEnv(env proc.Lookup) map[string]string {
	out := map[string]string{}
	if env == nil {
		return out
	}
	for _, k := range brokerEnv() {
		if v, ok := env(k); ok {
			out[k] = v
		}
	}
	return out
}

// brokerEnv is what a broker keeps of its starter's environment: what
// the servers keep, and the broker's own settings.
func brokerEnv() []string {
	keys := []string{"PATH", BrokerDirEnv, BrokerIdleEnv, "GOBIN", "XDG_RUNTIME_DIR"}
	keys = append(keys, commonEnv...)
	for _, s := range servers() {
		keys = append(keys, s.Env...)
	}
	return keys
}

// start runs a broker for root, detached; it does not wait for it.
func (b *Broker) start(root string) error {
	if b.Executable == "" {
		return errs.Errorf(CodeBroker, "cannot start a symbol broker: the rowkit binary is unknown").WithHint("use --no-broker")
	}
	p, err := proc.Start(context.Background(), proc.Spec{
		Path: b.Executable, Argv0: "rowkit", Args: []string{"symbol", "--broker", root},
		Dir: "/", Env: proc.Env(b.Env, brokerEnv()), Outlive: true, Session: true,
	})
	if err != nil {
		return errs.Errorf(CodeBroker, "cannot start a symbol broker (%s): %v", b.Executable, err)
	}
	// Reap it if it exits while this process still runs (the broker that
	// lost the race for the lock exits at once).
	go p.Wait()
	return nil
}

// BrokerOptions configure ServeBroker.
type BrokerOptions struct {
	Root     string // the workspace, canonical
	Idle     time.Duration
	Identity string // the binary's identity (Identity)
	Engine   Options
}

// ServeBroker runs the broker of o.Root until it is idle for o.Idle, the
// workspace goes away, a call from another binary comes, or ctx ends. It
// returns nil at once when another broker already serves the workspace.
func ServeBroker(ctx context.Context, o BrokerOptions) error {
	if o.Idle <= 0 {
		o.Idle = DefaultBrokerIdle
	}
	dir, err := BrokerDir(o.Engine.LookupEnv)
	if err != nil {
		return err
	}
	stem := brokerStem(dir, o.Root)
	lock, err := os.OpenFile(stem+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return errs.Errorf(CodeBroker, "cannot open the broker lock %s.lock: %v", stem, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil // another broker serves this workspace
		}
		return errs.Errorf(CodeBroker, "cannot lock %s.lock: %v", stem, err)
	}
	lock.Truncate(0)
	fmt.Fprintf(lock, "%d\n", os.Getpid())
	logf, err := os.OpenFile(stem+".log", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return errs.Errorf(CodeBroker, "cannot open the broker log %s.log: %v", stem, err)
	}
	defer logf.Close()
	logw := &syncWriter{w: logf}
	o.Engine.Log = logw
	fmt.Fprintf(logw, "rowkit symbol broker %d: serving %s (idle %s)\n", os.Getpid(), o.Root, o.Idle)
	root, err := workspace.Open(o.Root)
	if err != nil {
		return err
	}
	if root.Dir() != o.Root {
		return errs.Errorf(CodeBroker, "the workspace %s is not canonical (%s)", o.Root, root.Dir())
	}
	e, err := Open(root, o.Engine)
	if err != nil {
		return err
	}
	defer e.Close()
	// The lock is held: a socket file left is a dead broker's.
	os.Remove(stem + ".sock")
	l, err := net.Listen("unix", stem+".sock")
	if err != nil {
		return errs.Errorf(CodeBroker, "cannot listen on %s.sock: %v", stem, err)
	}
	ul := l.(*net.UnixListener)
	ul.SetUnlinkOnClose(true)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var active sync.WaitGroup
	var mu sync.Mutex
	running := 0
	go func() {
		// The reasons to stop: idle, the workspace gone, ctx.
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				l.Close()
				return
			case <-t.C:
			}
			mu.Lock()
			busy := running > 0
			mu.Unlock()
			switch {
			case e.Gone():
				fmt.Fprintf(logw, "the workspace %s is gone; exiting\n", o.Root)
				stop()
			case !busy && time.Since(e.LastUsed()) > o.Idle:
				fmt.Fprintf(logw, "idle for %s; exiting\n", o.Idle)
				stop()
			}
		}
	}()
	for {
		conn, err := l.Accept()
		if err != nil {
			break
		}
		mu.Lock()
		running++
		mu.Unlock()
		active.Add(1)
		go func() {
			defer active.Done()
			defer func() {
				mu.Lock()
				running--
				mu.Unlock()
			}()
			if serveConn(ctx, conn, e, o) {
				fmt.Fprintf(logw, "a call from another rowkit binary; exiting\n")
				stop()
			}
		}()
	}
	l.Close()
	active.Wait()
	return nil
}

// serveConn answers one call. It reports whether the call came from
// another binary (the broker must then give way).
func serveConn(ctx context.Context, conn net.Conn, e *Engine, o BrokerOptions) (stale bool) {
	defer conn.Close()
	rd := bufio.NewReaderSize(conn, 64<<10)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := rd.ReadBytes('\n')
	if err != nil {
		return false
	}
	conn.SetReadDeadline(time.Time{})
	var req brokerRequest
	reply := &brokerReply{}
	switch {
	case json.Unmarshal(line, &req) != nil:
		reply.Error = replyError(errs.Errorf(CodeBroker, "the broker got a message it cannot read"))
	case req.Protocol != brokerProtocol || req.Identity != o.Identity:
		reply.Stale = true
		stale = true
	case req.Root != o.Root:
		reply.Error = replyError(errs.Errorf(CodeBroker, "the broker of %s was asked about %s", o.Root, req.Root))
	default:
		// The caller going away (Ctrl-C, a killed shell) cancels the
		// query: it sends nothing more, so a read ends only then.
		qctx, cancel := context.WithCancel(ctx)
		go func() {
			rd.ReadByte()
			cancel()
		}()
		res, err := e.Query(qctx, req.Request, req.Budget)
		cancel()
		if err != nil {
			reply.Error = replyError(err)
		} else {
			reply.Result, reply.Left, reply.LeftCapped = res, res.Left, res.LeftCapped
		}
	}
	b, _ := json.Marshal(reply)
	conn.Write(append(b, '\n'))
	return stale
}

// syncWriter serialises writes to a log.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

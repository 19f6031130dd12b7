// Package regfile owns opening files that must be regular: a stat before the
// open, so that a device is never opened; a non-blocking open, so that a
// FIFO swapped in after the stat cannot hang the caller; and a second check
// on the open file. Every rowkit command that reads a named file goes
// through it; each maps the errors to its own codes.
package regfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError reports a file that is not a regular file.
type NotRegularError struct {
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string { return "is " + e.Kind() }

// Kind names what the file is: "a directory", "a FIFO", "a socket",
// "a device" or "not a regular file".
func (e *NotRegularError) Kind() string {
	switch m := e.Mode; {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// Check returns a *NotRegularError unless fi describes a regular file.
func Check(fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return &NotRegularError{Mode: fi.Mode()}
}

// Open opens name for reading through stat and open (os.Stat and
// os.OpenFile, or the methods of an *os.Root). It returns the open file and
// its metadata, a *NotRegularError, or the error of stat, open or fstat.
func Open(stat func(string) (fs.FileInfo, error), open func(string, int, fs.FileMode) (*os.File, error), name string) (*os.File, fs.FileInfo, error) {
	fi, err := stat(name)
	if err != nil {
		return nil, nil, err
	}
	if err := Check(fi); err != nil {
		return nil, nil, err
	}
	f, err := open(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = Check(fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// AsNotRegular reports whether err is a *NotRegularError and returns it.
func AsNotRegular(err error) (*NotRegularError, bool) {
	var e *NotRegularError
	ok := errors.As(err, &e)
	return e, ok
}

// Cause drops the operation and path that an *fs.PathError repeats, for
// messages that name the path themselves.
func Cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ErrWouldBlock reports a regular file whose read would wait for data, as
// a kernel interface such as /proc/kmsg does: it looks like an empty
// regular file but is a stream.
var ErrWouldBlock = errors.New("reading would block: the file is a kernel stream, not stored data")

// Reader returns a reader of f, opened by Open, that never waits: f is in
// non-blocking mode, and a read that the kernel would make wait fails with
// ErrWouldBlock instead of parking in the runtime's poller (which would
// wait forever on a pollable kernel file).
func Reader(f *os.File) io.Reader {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	return &nbReader{rc: rc}
}

type nbReader struct {
	rc syscall.RawConn
}

func (r *nbReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Read(int(fd), p)
			if rerr != syscall.EINTR {
				return true // never wait for readiness
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case rerr == syscall.EAGAIN:
		return 0, ErrWouldBlock
	case rerr != nil:
		return 0, rerr
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

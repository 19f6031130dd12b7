package regfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	f, fi, err := Open(os.Stat, os.OpenFile, file)
	if err != nil || fi.Size() != 6 {
		t.Fatalf("regular file: %v", err)
	}
	f.Close()

	for name, kind := range map[string]string{dir: "a directory", fifo: "a FIFO", sock: "a socket", "/dev/null": "a device"} {
		_, _, err := Open(os.Stat, os.OpenFile, name)
		e, ok := AsNotRegular(err)
		if !ok || e.Kind() != kind {
			t.Errorf("%s: err %v, want %s", name, err, kind)
		}
	}

	_, _, err = Open(os.Stat, os.OpenFile, filepath.Join(dir, "missing"))
	if !errors.Is(err, fs.ErrNotExist) || Cause(err) != syscall.ENOENT {
		t.Fatalf("missing: %v", err)
	}
}

// A FIFO that the stat saw as a regular file is still opened without
// blocking and refused by the check on the open file.
func TestOpenFIFOSwappedIn(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	regular, err := os.Stat(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	lying := func(string) (fs.FileInfo, error) { return regular, nil }
	_, _, err = Open(lying, os.OpenFile, fifo)
	if e, ok := AsNotRegular(err); !ok || e.Kind() != "a FIFO" {
		t.Fatalf("err %v", err)
	}
}

// A pollable kernel file that has no data fails at once instead of hanging
// (as /proc/kmsg would); a regular file reads to EOF as usual.
func TestReaderNeverWaits(t *testing.T) {
	if _, err := os.Stat("/proc/kmsg"); err != nil {
		t.Skip("no /proc/kmsg here")
	}
	f, _, err := Open(os.Stat, os.OpenFile, "/proc/kmsg")
	if err != nil {
		t.Skipf("cannot open /proc/kmsg: %v", err) // not root
	}
	defer f.Close()
	done := make(chan error, 1)
	go func() {
		// One byte: if the log has data, take as little of it as possible.
		_, err := Reader(f).Read(make([]byte, 1))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("err = %v", err)
		}
		if err == nil {
			t.Log("the kernel log had data")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading /proc/kmsg hung")
	}

	name := filepath.Join(t.TempDir(), "f")
	os.WriteFile(name, []byte("hello"), 0o644)
	g, _, err := Open(os.Stat, os.OpenFile, name)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if b, err := io.ReadAll(Reader(g)); err != nil || string(b) != "hello" {
		t.Errorf("read %q, %v", b, err)
	}
}

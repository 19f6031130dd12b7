package cli

import (
	"io"
	"os"
	"testing"
	"time"
)

func pipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// Drained returns only once the reader has read everything written to
// stdout's pipe, and at once when there is nothing to wait for.
func TestDrained(t *testing.T) {
	outR, outW := pipe(t)
	_, errW := pipe(t)
	if _, err := outW.Write(make([]byte, 40000)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { Drained(outW, errW); close(done) }()
	// The reader reads all but a byte: Drained still waits.
	if _, err := io.ReadFull(outR, make([]byte, 39999)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatal("Drained returned with a byte unread")
	case <-time.After(50 * time.Millisecond):
	}
	outR.Read(make([]byte, 1))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Drained did not return once the pipe was read")
	}

	// A reader that reads nothing: Drained gives up.
	outW.Write([]byte("unread\n"))
	start := time.Now()
	Drained(outW, errW)
	if d := time.Since(start); d < drainPatience {
		t.Errorf("gave up after %v, before its patience", d)
	}
	outR.Read(make([]byte, 100))

	// One pipe for both streams, or stderr not a pipe: nothing to wait for.
	outW.Write([]byte("unread\n"))
	for _, errF := range []*os.File{outW, tempFile(t)} {
		start := time.Now()
		Drained(outW, errF)
		if d := time.Since(start); d >= drainPatience {
			t.Errorf("waited %v with stderr %s", d, errF.Name())
		}
	}
}

func tempFile(t *testing.T) *os.File {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

package spool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/errs"
)

// A RowsWriter keeps whole rows up to MaxRows bytes, then stops: the kept
// output ends at a row and reads back as capped.
func TestRowsWriter(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.CreateRows()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for i := 0; !w.Capped(); i++ {
		row := fmt.Sprintf("\"a.go\":%d:abcd row %d %s\n", i+1, i, strings.Repeat("x", i%90))
		if want.Len()+len(row) <= MaxRows {
			want.WriteString(row)
		}
		w.Write([]byte(row))
	}
	id, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	it, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	got, _ := io.ReadAll(it)
	if !bytes.Equal(got, want.Bytes()) || it.Kind != Rows || !it.Capped || len(got) > MaxRows || got[len(got)-1] != '\n' {
		t.Errorf("kept %d bytes (kind %s, capped %v), want the %d bytes of whole rows within %d", len(got), it.Kind, it.Capped, want.Len(), MaxRows)
	}
}

// NotKept says why, within the room the kept output's name would have
// taken, cut at a character.
func TestNotKept(t *testing.T) {
	err := errs.Errorf(errs.Write, "cannot keep the output in /tmp/ü/%s: no space left on device", strings.Repeat("é", 40))
	if got := NotKept(err, 1000); got != "; not kept: "+err.Msg {
		t.Errorf("NotKept = %q", got)
	}
	for room := 0; room < 80; room++ {
		got := NotKept(err, room)
		if len(got) > max(room, 3) || !strings.HasSuffix(got, "...") || !strings.HasPrefix("; not kept: "+err.Msg, strings.TrimSuffix(got, "...")) {
			t.Errorf("room %d: %q", room, got)
		}
	}
	if got := NotKept(errors.New("plain"), 100); got != "; not kept: plain" {
		t.Errorf("NotKept of a plain error = %q", got)
	}
}

package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowkit/rowkit/internal/txn"
)

// A client root outside every --root is not a workspace of this server:
// narrowing it must not act on it. Opening a workspace settles a
// transaction a crash left pending there (it renames and removes files),
// so a client root is judged before it is opened.
func TestNarrowLeavesOutsideClientRootAlone(t *testing.T) {
	server := canon(t, t.TempDir())
	outside := canon(t, t.TempDir())
	// A pending transaction that rowkit would recognise as its own: the
	// journal records its own inode and its directory's, and rolling back
	// the prepare state removes the staged temporary file.
	id := "0123456789ab"
	temp := ".a.txt.rowkit-" + id + ".tmp"
	write(t, filepath.Join(outside, temp), "staged\n")
	if err := os.Mkdir(filepath.Join(outside, ".rowkit"), 0o755); err != nil {
		t.Fatal(err)
	}
	jpath := filepath.Join(outside, ".rowkit", "journal")
	if err := os.WriteFile(jpath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ino := func(p string) string {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`{"dev":%d,"ino":%d}`, st.Dev, st.Ino)
	}
	j := fmt.Sprintf(`{"id":%q,"state":"prepare","ops":[{"target":"a.txt","temp":%q}],"self":%s,"home":%s}`,
		id, temp, ino(jpath), ino(filepath.Dir(jpath)))
	if err := os.WriteFile(jpath, []byte(j), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := openRoot(server)
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	got := narrow([]root{s}, []*mcp.Root{{URI: "file://" + outside}}, func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) })
	if len(got) != 1 || got[0].ws.Dir() != server {
		t.Errorf("narrowed to %v", got)
	}
	for _, p := range []string{temp, ".rowkit/journal"} {
		if _, err := os.Lstat(filepath.Join(outside, p)); err != nil {
			t.Errorf("narrowing touched the client root outside the --root: %v", err)
		}
	}
	if len(logged) == 0 {
		t.Error("the ignored client root was not logged")
	}
	// The same journal inside the --root is served, and still not settled:
	// opening a workspace never writes. A writer's recovery rolls it back:
	// the journal is rowkit's own (the test's premise).
	in := filepath.Join(server, "in")
	if err := os.Rename(outside, in); err != nil {
		t.Fatal(err)
	}
	got = narrow([]root{s}, []*mcp.Root{{URI: "file://" + in}}, func(string, ...any) {})
	if len(got) != 1 || got[0].ws.Dir() != in {
		t.Fatalf("narrowed to %v", got)
	}
	if _, err := os.Lstat(filepath.Join(in, temp)); err != nil {
		t.Errorf("opening the client root settled its pending transaction: %v", err)
	}
	if rec, err := txn.Recover(context.Background(), got[0].ws); err != nil || rec.Action != txn.RolledBack {
		t.Fatalf("the test's journal is not rowkit's own: %+v %v", rec, err)
	}
	if _, err := os.Lstat(filepath.Join(in, temp)); err == nil {
		t.Error("the recovery left the staged file")
	}
}

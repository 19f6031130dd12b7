package txn

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"testing"

	"github.com/rowkit/rowkit/internal/workspace"
)

// The journal is read from disk, where anything may have put it: whatever
// bytes it holds, one that passes valid names only clean paths inside the
// root and only rowkit's own staging names beside them. (The inode proofs
// come on top; see TestRecoverIgnores*.)
func FuzzJournal(f *testing.F) {
	for _, ops := range []string{
		`[{"target":"a.txt","temp":".rowkit/000000000000.0.new","backup":".rowkit/000000000000.0.old"}]`,
		`[{"target":"a.txt","temp":".rowkit/000000000000.1.new"}]`,
		`[{"target":".rowkit/lock","temp":".rowkit/000000000000.0.new"}]`,
		`[{"target":"a.txt","temp":".a.txt.rowkit-000000000000.tmp","backup":".a.txt.rowkit-000000000000.old","old_sum":"` + strings.Repeat("ab", 32) + `","old_size":3}]`,
		`[{"target":"d/b.txt","temp":"d/.b.txt.rowkit-000000000000.tmp"}]`,
		`[{"target":"c.txt","backup":".c.txt.rowkit-000000000000.old","delete":true}]`,
		// The table of TestRecoverIgnoresJournalOutsideRoot.
		`[{"target":"../x","temp":"../.x.rowkit-000000000000.tmp"}]`,
		`[{"target":"/etc/x","temp":"/etc/.x.rowkit-000000000000.tmp"}]`,
		`[{"target":"keep.txt","temp":"other.txt"}]`,
		`[{"target":"keep.txt/../../x","temp":"keep.txt/../../.x.rowkit-000000000000.tmp"}]`,
	} {
		f.Add([]byte(`{"id":"000000000000","state":"commit","ops":` + ops + `,"dirs":["d"],"self":{"dev":1,"ino":2},"home":{"dev":1,"ino":3}}`))
		f.Add([]byte(`{"id":"000000000000","state":"commit","ops":` + ops + `,"dirs":[{"path":"d","stage":".rowkit/000000000000.d0"},{"path":"d/e"}],"self":{"dev":1,"ino":2},"home":{"dev":1,"ino":3}}`))
	}
	f.Add([]byte(`{"id":"000000000000","state":"prepare","ops":[],"dirs":["..","/","a//b","./a"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var j journal
		if json.Unmarshal(data, &j) != nil || !j.valid() {
			return
		}
		inside := func(p string) {
			c, err := workspace.Clean(p)
			if err != nil || c != p || p == "." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
				t.Fatalf("valid journal names %q", p)
			}
		}
		for n, o := range j.Ops {
			inside(o.Target)
			if strings.HasPrefix(o.Target, ".rowkit/") || o.Target == ".rowkit" {
				t.Fatalf("valid journal targets rowkit's own %q", o.Target)
			}
			dir, base := path.Split(o.Target)
			for _, s := range []struct{ name, ext, own string }{{o.Temp, ".tmp", ".new"}, {o.Backup, ".old", ".old"}} {
				if s.name == "" {
					continue
				}
				sdir, sbase := path.Split(s.name)
				above := sdir == "" || strings.HasPrefix(dir, sdir)
				if !(above && sbase == "."+base+".rowkit-"+j.ID+s.ext) && s.name != fmt.Sprintf(".rowkit/%s.%d%s", j.ID, n, s.own) {
					t.Fatalf("valid journal stages %q for %q", s.name, o.Target)
				}
			}
			if o.Delete && (o.Temp != "" || o.Backup == "") {
				t.Fatalf("valid journal deletes %q without a backup", o.Target)
			}
		}
		for n, d := range j.Dirs {
			inside(d.Path)
			dir, base := path.Split(d.Path)
			if d.Stage != "" && d.Stage != dir+"."+base+".rowkit-"+j.ID+".dir" && d.Stage != fmt.Sprintf(".rowkit/%s.d%d", j.ID, n) {
				t.Fatalf("valid journal stages directory %q as %q", d.Path, d.Stage)
			}
		}
	})
}

package review_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/review"
	"github.com/rowkit/rowkit/internal/workspace"
)

// An embedder (the MCP server, say) confines the inspection to a root,
// takes the server's tighter bounds, follows the validations' progress,
// and reads the typed report; a refusal is a coded error carrying its exit
// status.
func Example() {
	dir, _ := os.MkdirTemp("", "review-example-")
	defer os.RemoveAll(dir)
	git := func(args ...string) {
		c := exec.Command("git", append([]string{"-c", "user.name=Ex", "-c", "user.email=ex@example.com"}, args...)...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			panic(fmt.Sprintf("git %v: %v\n%s", args, err, out))
		}
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644)
	git("add", "a.txt")
	git("commit", "-q", "-m", "first")
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644)

	root, err := workspace.Open(dir)
	if err != nil {
		panic(err)
	}
	r, err := review.Inspect(context.Background(), review.Options{
		Repo: ".", Root: root, Detail: review.DetailFull, LookupEnv: os.LookupEnv,
		MaxFiles: review.ServerMaxFiles, MaxOutputBytes: review.ServerMaxOutputBytes,
		MaxTotalOutputBytes: review.ServerMaxTotalOutputBytes,
		Validations:         []review.Planned{{ID: "count", Argv: []string{"wc", "-l", "a.txt"}}},
		Progress: func(p review.Progress) {
			if p.Done {
				fmt.Printf("validation %d of %d (%s): %s\n", p.Index+1, p.Total, p.ID, p.Status)
			} else {
				fmt.Printf("validation %d of %d (%s) started\n", p.Index+1, p.Total, p.ID)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	for _, f := range r.Changes.Files {
		fmt.Println(f.Status, f.Path, f.Scopes)
	}
	e := r.Changes.Unstaged[0]
	fmt.Printf("%s: +%d -%d\n", e.Path, *e.Added, *e.Removed)
	fmt.Printf("ok=%v %s %q\n", r.OK, r.Validations[0].Status, r.Validations[0].Stdout.Text)

	_, err = review.Inspect(context.Background(), review.Options{Repo: "..", Root: root, LookupEnv: os.LookupEnv})
	fmt.Println(errs.Code(err), errs.ExitCode(err))
	// Output:
	// validation 1 of 1 (count) started
	// validation 1 of 1 (count): passed
	// modified a.txt [unstaged]
	// untracked new.txt [untracked]
	// a.txt: +1 -0
	// ok=true passed "2 a.txt\n"
	// outside_workspace 3
}

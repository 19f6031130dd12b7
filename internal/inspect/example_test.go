package inspect_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rowkit/rowkit/internal/errs"
	"github.com/rowkit/rowkit/internal/inspect"
	"github.com/rowkit/rowkit/internal/workspace"
)

// An embedder confines the engine to a workspace root, passes its own
// context, and reads the typed result; failures carry a stable code.
func Example() {
	dir, _ := os.MkdirTemp("", "inspect-example")
	defer os.RemoveAll(dir)
	src := "package demo\n\n// Greeter greets.\ntype Greeter struct{ Name string }\n\nfunc (g *Greeter) Hello() string {\n\treturn \"hello, \" + g.Name\n}\n"
	os.WriteFile(filepath.Join(dir, "demo.go"), []byte(src), 0o644)

	root, err := workspace.Open(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := inspect.Inspect(context.Background(), root, "demo.go")
	if err != nil {
		fmt.Println(errs.Code(err), err)
		return
	}
	d := res.Data
	fmt.Println(d.Path, d.Kind, *d.Language, *d.LineCount, "lines, complete:", d.ParseComplete)
	for _, e := range d.Outline {
		fmt.Println(e.Kind, *e.Name, e.Line+".."+e.LineEnd)
	}

	// A path outside the root is refused with a code, whatever is there.
	_, err = inspect.Inspect(context.Background(), root, "../demo.go")
	fmt.Println(errs.Code(err))

	// The command reports a failure as one JSON line.
	fmt.Printf("%s", inspect.AppendFailure(nil, nil, errs.New(errs.Usage, "missing PATH")))
	// Output:
	// demo.go code go 8 lines, complete: true
	// type Greeter 4:6d2d..4:6d2d
	// method Hello 6:e321..8:d10b
	// outside_workspace
	// {"ok":false,"path":null,"error":{"code":"usage","message":"missing PATH"}}
}

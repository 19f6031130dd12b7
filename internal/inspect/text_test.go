package inspect

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rowkit/rowkit/internal/workspace"
)

func TestOutlineText(t *testing.T) {
	dir := t.TempDir()
	// Hashes checked with Python's hashlib (sha256, first four hex digits).
	for _, tc := range []struct {
		name, src, want string
	}{
		{"t.py", "import os\nimport sys\nfrom a import (b,\n    c)\n\nX = 1\nY = 2\n\nclass C:\n    def m(self):\n        return 1\n    def o(self):\n        pass\n\ndef f():\n    pass\n",
			"t.py: code python, 16 lines\n" +
				"1:de2a..4:9eca import os, sys, b, c\n" +
				"6:0054..7:68ac variable X, Y\n" +
				"9:fcd1..13:0b35 class C\n" +
				"10:4015..11:824d method m\n" +
				"12:261d..13:0b35 method o\n" +
				"15:e356..16:e225 function f\n"},
		{"t.go", "package p\n\ntype T struct{}\n\nfunc (t *T) M() {}\n\nfunc (T) N() {}\n",
			"t.go: code go, 7 lines\n" +
				"3:220e type T\n" +
				"5:8de1 method (*T).M\n" +
				"7:d82a method T.N\n"},
		{"t.json", "{\"a\": 1, \"b\": [\n  {\"x\": 1,\n   \"y\": 2}\n], \"k\\n\": {\n \"d\": true\n}}\n",
			"t.json: json, 6 lines\n" +
				"1:0efc..6:2f86 json (root) object\n" +
				"1:0efc json /a number\n" +
				"1:0efc..4:b7e1 json /b array\n" +
				"2:0157..3:14c7 json /b/0/{x,y}\n" +
				"4:b7e1..6:2f86 json /k\\n/{d}\n"},
		{"t.md", "# A\n\n## B\n", "t.md: markdown, 3 lines\n1:327f heading # A\n3:cff8 heading ## B\n"},
		{"t.txt", "hello\n", "t.txt: none, 6 bytes, no outline\n"},
	} {
		if err := os.WriteFile(filepath.Join(dir, tc.name), []byte(tc.src), 0o644); err != nil {
			t.Fatal(err)
		}
		root, _ := workspace.Open(dir)
		res, err := Inspect(context.Background(), root, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := OutlineText(res); got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

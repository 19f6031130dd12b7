// Command biggen writes a large source file of one of inspect_file's
// languages, made of varied, valid declarations repeated with fresh names
// until it reaches a size: the input of bench/inspectsize.sh.
//
//	go run ./bench/biggen -lang go|python|typescript|javascript|markdown|json -size BYTES -o FILE
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
)

func main() {
	lang := flag.String("lang", "go", "go, python, typescript, javascript, markdown or json")
	size := flag.Int64("size", 7<<20, "bytes to write (at least)")
	out := flag.String("o", "", "output file")
	flag.Parse()
	if *out == "" {
		log.Fatal("biggen: -o FILE is required")
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := &counter{w: bufio.NewWriterSize(f, 1<<20)}
	gen, ok := gens[*lang]
	if !ok {
		log.Fatalf("biggen: unknown language %q", *lang)
	}
	gen(w, *size)
	if err := w.w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

type counter struct {
	w *bufio.Writer
	n int64
}

func (c *counter) printf(format string, args ...any) {
	n, _ := fmt.Fprintf(c.w, format, args...)
	c.n += int64(n)
}

var gens = map[string]func(w *counter, size int64){
	"go": func(w *counter, size int64) {
		w.printf("// Package big is generated.\npackage big\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n\t\"strings\"\n)\n\n")
		for i := 0; w.n < size; i++ {
			w.printf("// Item%d holds one record.\ntype Item%d struct {\n\tName  string\n\tCount int\n\tTags  []string\n}\n\n", i, i)
			w.printf("const limit%d = %d\n\nvar default%d = Item%d{Name: \"item %d\", Count: %d}\n\n", i, i*7, i, i, i, i)
			w.printf("// Total%d adds the counts.\nfunc (it *Item%d) Total%d(xs []int) (int, error) {\n\tif len(xs) > limit%d {\n\t\treturn 0, errors.New(\"too many\")\n\t}\n\tsum := it.Count\n\tfor _, x := range xs {\n\t\tsum += x\n\t}\n\treturn sum, nil\n}\n\n", i, i, i, i)
			w.printf("func describe%d(it Item%d) string {\n\treturn fmt.Sprintf(\"%%s: %%d [%%s]\", it.Name, it.Count, strings.Join(it.Tags, \", \"))\n}\n\n", i, i)
		}
	},
	"python": func(w *counter, size int64) {
		w.printf("\"\"\"Generated module.\"\"\"\nimport os\nimport sys\nfrom typing import List, Optional\n\n")
		for i := 0; w.n < size; i++ {
			w.printf("LIMIT_%d = %d\n\n\nclass Item%d:\n    \"\"\"One record.\"\"\"\n\n    def __init__(self, name: str, count: int = 0) -> None:\n        self.name = name\n        self.count = count\n\n", i, i*7, i)
			w.printf("    def total(self, xs: List[int]) -> int:\n        if len(xs) > LIMIT_%d:\n            raise ValueError(\"too many\")\n        return self.count + sum(x for x in xs if x > 0)\n\n", i)
			w.printf("    @property\n    def label(self) -> str:\n        return f\"{self.name}: {self.count}\"\n\n\n")
			w.printf("def describe_%d(item: Optional[Item%d]) -> str:\n    if item is None:\n        return os.sep\n    return \", \".join([item.name, str(item.count), sys.platform])\n\n\n", i, i)
		}
	},
	"typescript": func(w *counter, size int64) {
		w.printf("import { readFile } from \"node:fs/promises\";\nimport type { Stats } from \"node:fs\";\n\n")
		for i := 0; w.n < size; i++ {
			w.printf("export interface Item%d {\n  name: string;\n  count: number;\n  tags?: readonly string[];\n}\n\n", i)
			w.printf("export type Pair%d<T> = [T, Item%d];\n\nconst limit%d: number = %d;\n\n", i, i, i, i*7)
			w.printf("export class Store%d<T extends Item%d> {\n  private items: Map<string, T> = new Map();\n  constructor(private readonly prefix: string) {}\n  add(item: T): this {\n    this.items.set(this.prefix + item.name, item);\n    return this;\n  }\n  async load(path: string): Promise<number> {\n    const text = await readFile(path, \"utf8\");\n    return text.length > limit%d ? -1 : text.length;\n  }\n}\n\n", i, i, i)
			w.printf("export function describe%d(it: Item%d, st?: Stats): string {\n  return `${it.name}: ${it.count} ${st?.size ?? 0}`;\n}\n\n", i, i)
		}
	},
	"javascript": func(w *counter, size int64) {
		w.printf("import { readFile } from \"node:fs/promises\";\n\n")
		for i := 0; w.n < size; i++ {
			w.printf("const limit%d = %d;\n\nexport class Store%d {\n  #items = new Map();\n  constructor(prefix) {\n    this.prefix = prefix;\n  }\n  add(item) {\n    this.#items.set(this.prefix + item.name, item);\n    return this;\n  }\n  async load(path) {\n    const text = await readFile(path, \"utf8\");\n    return text.length > limit%d ? -1 : text.length;\n  }\n}\n\n", i, i*7, i, i)
			w.printf("export function describe%d(it) {\n  return `${it.name}: ${it.count}`;\n}\n\nexport const total%d = (xs) => xs.reduce((a, b) => a + b, 0);\n\n", i, i)
			w.printf("function render%d(props) {\n  return <div className=\"item\" key={props.id}>{props.name}</div>;\n}\n\n", i)
		}
	},
	"markdown": func(w *counter, size int64) {
		w.printf("---\ntitle: Generated\ntags: [a, b]\nauthor: gen\n---\n\n# Generated document\n\n")
		for i := 0; w.n < size; i++ {
			w.printf("## Section %d\n\nSome *text* with `code` and a [link](https://example.com/%d) in section %d,\nsplit over two lines.\n\n", i, i, i)
			w.printf("- one item %d\n- two items\n  - nested\n\n> quoted %d\n\n```go\n# not a heading %d\nfunc f() {}\n```\n\n### Detail %d\n\n1. first\n2. second\n\n", i, i, i, i)
		}
	},
	"json": func(w *counter, size int64) {
		w.printf("{\n  \"name\": \"generated\",\n  \"version\": \"1.0.0\",\n  \"packages\": {\n")
		for i := 0; ; i++ {
			w.printf("    \"node_modules/pkg-%d\": {\n      \"version\": \"%d.%d.%d\",\n      \"resolved\": \"https://registry.example.com/pkg-%d.tgz\",\n      \"integrity\": \"sha512-%s\",\n      \"dev\": %v,\n      \"dependencies\": {\"a\": \"^1.0.0\", \"b~c/d\": \"2.x\"},\n      \"engines\": [\"node >= 18\", null, 3.5]\n    }", i, i%10, i%7, i%3, i, strings.Repeat("x", 40), i%2 == 0)
			if w.n >= size {
				break
			}
			w.printf(",\n")
		}
		w.printf("\n  }\n}\n")
	},
}

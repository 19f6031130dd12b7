package inspect

import "testing"

const tsSample = `import def, { a, b as c, "q-r" as qr } from "./m";
import * as ns from 'ns';
import "./side\x2deffect";
import type { T } from "t";
import fs = require("fs");
export const X = 1, { y, z: [w, ...rest], u = 2 } = obj;
let l; var v;
export default function named() {}
export default class { }
export function* gen() {}
declare function amb(x: number): void;
function over(a: string): void;
function over(a: any) {
  function nested() {}
}
export abstract class C<T> extends B implements I {
  #priv = 1;
  field: string;
  constructor() { super(); }
  @dec
  get x() { return 1 }
  set x(v) {}
  static s() {}
  #p() {}
  "quoted"() {}
  [Symbol.iterator]() {}
  abstract am(): void;
  sig(): void;
}
export interface I { m(): void }
type TA = string | number;
enum E { A, B }
declare enum DE { X }
declare const dc: number;
namespace NS { export function no() {} }
declare module "mod" { function no2(): void }
`

var tsWant = []string{
	"import def 1-1", "import a 1-1", "import c 1-1", "import qr 1-1",
	"import ns 2-2",
	"import ./side-effect 3-3",
	"import T 4-4",
	"import fs 5-5",
	"constant X 6-6", "constant y 6-6", "constant w 6-6", "constant rest 6-6", "constant u 6-6",
	"variable l 7-7", "variable v 7-7",
	"function named 8-8",
	"function gen 10-10",
	"function amb 11-11",
	"function over 12-12", "function over 13-15",
	"class C 16-29",
	"method constructor C 19-19",
	"method x C 20-21", "method x C 22-22",
	"method s C 23-23", "method #p C 24-24", `method "quoted" C 25-25`, "method [Symbol.iterator] C 26-26",
	"method am C 27-27", "method sig C 28-28",
	"type I 30-30", "type TA 31-31", "type E 32-32", "type DE 33-33",
	"constant dc 34-34",
}

func TestOutlineScript(t *testing.T) { runOutlineCases(t, scriptCases) }

var scriptCases = []outlineCase{{
	name: "typescript", file: "x.ts", src: tsSample, want: tsWant, complete: true,
}, {
	name: "declaration file", file: "x.d.ts", src: tsSample, want: tsWant, complete: true,
}, {
	name: "module typescript", file: "x.mts", src: tsSample, want: tsWant, complete: true,
}, {
	name:     "tsx",
	file:     "x.tsx",
	src:      "import React from 'react';\nexport const App = (p: Props) => <div>{p.x as string}</div>;\nexport function Page() {\n  return <App x=\"1\" />;\n}\n",
	want:     []string{"import React 1-1", "constant App 2-2", "function Page 3-5"},
	complete: true,
}, {
	name: "javascript with JSX",
	file: "x.jsx",
	src: `const App = () => <div className="x">{items.map(i => <Item key={i} />)}</div>;
export default App;
class Comp extends React.Component {
  @bound
  render() { return <p/>; }
  state = {};
  static get x() { return 1; }
}
`,
	want:     []string{"constant App 1-1", "class Comp 3-8", "method render Comp 4-5", "method x Comp 7-7"},
	complete: true,
}, {
	name:     "commonjs",
	file:     "x.cjs",
	src:      "'use strict';\nconst { a, b: { c } } = require('m');\nvar [d, , e = 1] = arr;\nmodule.exports = { a };\n",
	want:     []string{"constant a 2-2", "constant c 2-2", "variable d 3-3", "variable e 3-3"},
	complete: true,
}, {
	name:     "syntax error keeps the rest",
	file:     "x.mjs",
	src:      "export function ok() {}\nfunction broken( {\n\nexport const after = 1;\n",
	want:     []string{"function ok 1-1"},
	complete: false,
}, {
	name:     "lone CR ends a line",
	file:     "x.js",
	src:      "let a = 1\rfunction f() {\r}\r",
	want:     []string{"variable a 1-1", "function f 2-3"},
	complete: true,
}, {
	// TypeScript syntax is not JavaScript: incomplete, but the TSX parse
	// that JSX files get on an error still finds every declaration.
	name:     "TypeScript syntax in a .js file",
	file:     "x.js",
	src:      "interface I {}\nfunction f(x: number): string { return '' }\nclass K { m() {} }\n",
	want:     []string{"type I 1-1", "function f 2-2", "class K 3-3", "method m K 3-3"},
	complete: false,
}, {
	// Issue 10: JSX attributes spelled like reserved words (Solid, Preact,
	// Qwik) are an error for the JavaScript grammar, which then lost K and m.
	name:     "JSX class attribute in .jsx",
	file:     "x.jsx",
	src:      "export function F() {\n  return <div class=\"h\">x</div>;\n}\nclass K { m() {} }\n",
	want:     []string{"function F 1-3", "class K 4-4", "method m K 4-4"},
	complete: true,
}, {
	name: "JSX reserved-word attributes in .js",
	file: "x.js",
	src: `import { For } from "solid-js";
export const A = () => <label for="x" class="c">a</label>;
export const B = () => <C default={1} if={ok} new={2} this={t} typeof={k} />;
export class K {
  render() { return <input class="i" />; }
}
`,
	want:     []string{"import For 1-1", "constant A 2-2", "constant B 3-3", "class K 4-6", "method render K 5-5"},
	complete: true,
}, {
	name: "JSX reserved-word attribute and a real error",
	file: "x.mjs",
	src:  "export const A = () => <p class=\"x\" />;\nfunction broken( {\n\nexport function after() {}\nclass K { m() {} }\n",
	// As without the attribute ("syntax error keeps the rest"): recovery
	// keeps what precedes the error.
	want:     []string{"constant A 1-1"},
	complete: false,
}, {
	// Issue 10: valid TypeScript that tree-sitter-typescript 0.23.2 cannot
	// parse (see the package documentation). parse_complete is false, but
	// no named entry is lost: the anonymous default overload names nothing.
	name:     "gap: anonymous default overload signature",
	file:     "x.d.ts",
	src:      "export declare const a: number;\nexport default function (): number;\nexport default function (x: string): number;\nexport declare function after(): void;\nexport interface Z {}\n",
	want:     []string{"constant a 1-1", "function after 4-4", "type Z 5-5"},
	complete: false,
}, {
	name:     "gap: type arguments after import()",
	file:     "x.ts",
	src:      "import x from 'y';\nexport type T<O = X> = import(\"m\").S<O>;\nexport type U = number;\nclass C { m() {} }\n",
	want:     []string{"import x 1-1", "type T 2-2", "type U 3-3", "class C 4-4", "method m C 4-4"},
	complete: false,
}, {
	name:     "gap: keyof readonly",
	file:     "x.ts",
	src:      "const a = 1;\ntype M = { [K in keyof readonly any[]]?: boolean };\nfunction g() {}\nclass C { m() {} }\n",
	want:     []string{"constant a 1-1", "type M 2-2", "function g 3-3", "class C 4-4", "method m C 4-4"},
	complete: false,
}, {
	name: "gap: variance annotations",
	file: "x.ts",
	src: `const a = 1;
interface I<out O = unknown> {
  x: O;
}
export interface Z<in out T, out U extends T = T> extends I<T> {
  f(a: T): U;
}
function g() {}
export class C<in T> {
  m(x: T) {}
  n() {}
}
type F<in out T> = T;
`,
	want: []string{"constant a 1-1", "type I 2-4", "type Z 5-7", "function g 8-8",
		"class C 9-12", "method m C 10-10", "method n C 11-11", "type F 13-13"},
	complete: false,
}}

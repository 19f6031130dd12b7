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
	name:     "extension is case-sensitive: TS is TypeScript syntax in .ts only",
	file:     "x.js",
	src:      "interface I {}\n",
	complete: false,
}}

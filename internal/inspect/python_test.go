package inspect

import "testing"

func TestOutlinePython(t *testing.T) { runOutlineCases(t, pythonCases) }

var pythonCases = []outlineCase{{
	name: "module scope",
	file: "x.py",
	src: `import os, a.b.c as abc, x.y
from . import z
from m import (p,
    q as r)
from n import *
from __future__ import annotations
A = B = 1
c, [d, *e] = 1, [2, 3]
(f1, f2) = 1, 2
f: int
g: int = 3
obj.attr = 1
arr[0] = 2
h += 1
type Alias = list[int]

@dec
@dec2(1)
def top(a):
    def inner(): pass
    local = 1

async def atop(): pass

class K(Base):
    field = 1
    def m(self): pass
    @property
    def p(self):
        return 1
    async def am(self): pass
    class Inner:
        def no(self): pass

@decorate
class D:
    x: int

if TYPE_CHECKING:
    import typing
else:
    def fallback(): pass
try:
    import fast
except ImportError:
    fast = None
`,
	want: []string{
		"import os 1-1", "import abc 1-1", "import x 1-1",
		"import z 2-2",
		"import p 3-4", "import r 3-4",
		"import * 5-5",
		"import annotations 6-6",
		"variable A 7-7", "variable B 7-7",
		"variable c 8-8", "variable d 8-8", "variable e 8-8",
		"variable f1 9-9", "variable f2 9-9",
		"variable f 10-10", "variable g 11-11",
		"type Alias 15-15",
		"function top 17-21",
		"function atop 23-23",
		"class K 25-33",
		"method m K 27-27", "method p K 28-30", "method am K 31-31",
		"class D 35-37",
		"import typing 40-40",
		"function fallback 42-42",
		"import fast 44-44",
		"variable fast 46-46",
	},
	complete: true,
}, {
	name:     "syntax error keeps recovered definitions",
	file:     "x.pyi",
	src:      "def ok(): ...\n\ndef broken(:\n    pass\n\nclass After:\n    def m(self): ...\n",
	want:     []string{"function ok 1-1", "function broken 3-4", "class After 6-7", "method m After 7-7"},
	complete: false,
}, {
	name:     "lone CR ends a line",
	file:     "x.py",
	src:      "a = 1\rdef f():\r    return 2\r",
	want:     []string{"variable a 1-1", "function f 2-3"},
	complete: true,
}, {
	// Issue 10: a comment at body indentation after the last statement is
	// inside the body for tree-sitter; spans end at the last line of code.
	name: "spans end at the last line of code",
	file: "x.py",
	src: `class C:
    def m(self):
        if x:
            return 1
            # after the if body
        # after the method body
    # after the class body

# module level
@dec
def f():
    pass  # same line stays
    # trailing
        # deeper trailing
def g(): pass
    # odd indentation
x = 1
`,
	want:     []string{"class C 1-4", "method m C 2-4", "function f 10-12", "function g 15-15", "variable x 17-17"},
	complete: true,
}, {
	name:     "spans end at the last line of code, lone CR and CRLF",
	file:     "x.py",
	src:      "def f():\r    return 1\r    # c\rdef g():\r\n    return 2\r\n    # c\r\n",
	want:     []string{"function f 1-2", "function g 4-5"},
	complete: true,
}, {
	name:     "empty",
	file:     "x.py",
	src:      "",
	complete: true,
}}

#!/usr/bin/env bash
# build.sh OUT builds parse.c against tree-sitter and the pinned grammars
# (Python, TypeScript, TSX, JavaScript) from the Go module cache, -O2 as cgo
# builds them.
set -euo pipefail
cd "$(dirname "$0")/../.."
mods=(github.com/tree-sitter/go-tree-sitter github.com/tree-sitter/tree-sitter-python
	github.com/tree-sitter/tree-sitter-typescript github.com/tree-sitter/tree-sitter-javascript)
go mod download "${mods[@]}"
dir() { go list -m -f '{{.Dir}}' "$1"; }
ts=$(dir github.com/tree-sitter/go-tree-sitter)
py=$(dir github.com/tree-sitter/tree-sitter-python)/src
tsx=$(dir github.com/tree-sitter/tree-sitter-typescript)
js=$(dir github.com/tree-sitter/tree-sitter-javascript)/src
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc() { gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200112L -D_DEFAULT_SOURCE -I"$ts/include" -I"$ts/src" "$@" 2>/dev/null; }
cc -c bench/tsparse/parse.c -o "$tmp/main.o"
cc -c "$ts/src/lib.c" -o "$tmp/lib.o"
cc -I"$py" -c "$py/parser.c" -o "$tmp/py1.o"
cc -I"$py" -c "$py/scanner.c" -o "$tmp/py2.o"
cc -I"$tsx/typescript/src" -c "$tsx/typescript/src/parser.c" -o "$tmp/ts1.o"
cc -I"$tsx/typescript/src" -c "$tsx/typescript/src/scanner.c" -o "$tmp/ts2.o"
cc -I"$tsx/tsx/src" -c "$tsx/tsx/src/parser.c" -o "$tmp/tsx1.o"
cc -I"$tsx/tsx/src" -c "$tsx/tsx/src/scanner.c" -o "$tmp/tsx2.o"
cc -I"$js" -c "$js/parser.c" -o "$tmp/js1.o"
cc -I"$js" -c "$js/scanner.c" -o "$tmp/js2.o"
gcc "$tmp"/*.o -o "$1"

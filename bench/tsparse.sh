#!/usr/bin/env bash
# Times tree-sitter's C parser alone (no Go, no cgo) on the Python standard
# library, against ctags over the same files: the floor under inspect_file's
# Python outlines. Sources come from the Go module cache.
set -euo pipefail
cd "$(dirname "$0")/.."
go mod download github.com/tree-sitter/go-tree-sitter github.com/tree-sitter/tree-sitter-python
ts=$(go list -m -f '{{.Dir}}' github.com/tree-sitter/go-tree-sitter)
py=$(go list -m -f '{{.Dir}}' github.com/tree-sitter/tree-sitter-python)/src
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200112L -D_DEFAULT_SOURCE -I"$ts/include" -I"$ts/src" -I"$py" \
	bench/tsparse/parse.c "$ts/src/lib.c" "$py/parser.c" "$py/scanner.c" -o "$out/parse" 2>/dev/null
stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
find "$stdlib" \( -name site-packages -o -name dist-packages \) -prune -o -type f -name '*.py' -print | sort >"$out/files"
echo "files: $(wc -l <"$out/files") Python files under $stdlib"
printf 'tree-sitter C parse only: '
"$out/parse" "$out/files"
t0=$(date +%s%N)
ctags --sort=no -f - -L "$out/files" >/dev/null 2>&1
t1=$(date +%s%N)
echo "ctags over the same files: $(((t1 - t0) / 1000000)) ms"

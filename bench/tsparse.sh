#!/usr/bin/env bash
# Times tree-sitter's C parser alone (no Go, no cgo) on the Python standard
# library, against ctags over the same files: the floor under inspect_file's
# Python outlines. Sources come from the Go module cache. bench/inspect.sh
# uses the same program per language (bench/tsparse/build.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bench/tsparse/build.sh "$out/parse"
stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
find "$stdlib" \( -name site-packages -o -name dist-packages \) -prune -o -type f -name '*.py' -print | sort >"$out/files"
echo "files: $(wc -l <"$out/files") Python files under $stdlib"
printf 'tree-sitter C parse only: '
"$out/parse" -L "$out/files"
t0=$(date +%s%N)
ctags --sort=no -f - -L "$out/files" >/dev/null 2>&1
t1=$(date +%s%N)
echo "ctags over the same files: $(((t1 - t0) / 1000000)) ms"

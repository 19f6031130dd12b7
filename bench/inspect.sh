#!/usr/bin/env bash
# Benchmark of inspect_file against universal-ctags over the same files in
# the same run: every supported file of the Go source tree, the Python
# standard library and npm's own package. Prints throughput, the ratio to
# ctags, per-file latency (p50/p99) and peak RSS.
#
# First, issue 10's target per language: one process per file on PERLANG
# files of each language, inspect_file against ctags and, for the
# tree-sitter languages, the engine against tree-sitter's own C parse of the
# same files (bench/tsparse/parse.c).
#
#   bench/inspect.sh            # RUNS=3 SAMPLE=400 PERLANG=300 by default
#   RUNS=5 SAMPLE=1000 bench/inspect.sh
#   WHOLE=false bench/inspect.sh   # the per-language table only
#   EXTRA="/path/to/ts/sources" bench/inspect.sh   # more corpora (the three
#                                  # default ones hold few TypeScript files)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
SAMPLE=${SAMPLE:-400}
PERLANG=${PERLANG:-300}
WHOLE=${WHOLE:-true}

command -v ctags >/dev/null || { echo "bench/inspect.sh: install universal-ctags (apt-get install universal-ctags)" >&2; exit 1; }
ctags --version | grep -q Universal || { echo "bench/inspect.sh: ctags is not universal-ctags" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/inspect.sh: install GNU time for peak RSS (apt-get install time)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/rowkit" ./cmd/rowkit
ln -s rowkit "$tmp/inspect_file"
go build -o "$tmp/inspectbench" ./bench/inspectbench
bench/tsparse/build.sh "$tmp/tsparse"

corpora=("$(go env GOROOT)/src")
if py=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])' 2>/dev/null); then corpora+=("$py"); fi
if npm=$(npm root -g 2>/dev/null) && [ -d "$npm/npm" ]; then corpora+=("$npm/npm"); fi
for extra in ${EXTRA:-}; do corpora+=("$extra"); done

# Supported extensions only; names with a newline cannot be listed. The
# Python standard library excludes installed third-party packages.
find "${corpora[@]}" \( -name site-packages -o -name dist-packages \) -prune -o -type f \( -name '*.go' -o -name '*.py' -o -name '*.pyi' -o -name '*.ts' \
	-o -name '*.tsx' -o -name '*.mts' -o -name '*.cts' -o -name '*.js' -o -name '*.jsx' \
	-o -name '*.mjs' -o -name '*.cjs' -o -name '*.md' -o -name '*.json' \) \
	-not -name $'*\n*' -print | sort > "$tmp/files"
echo "corpora: ${corpora[*]}"

# Typical files of about 500 lines: one each of Go, Python and JavaScript.
typical=""
for f in "$(go env GOROOT)/src/path/filepath/path.go" "${py:-/nonexistent}/textwrap.py" "${npm:-/nonexistent}/npm/lib/npm.js"; do
	[ -f "$f" ] && typical+="${typical:+,}$f"
done

echo "date: $(date -u +%Y-%m-%dT%H:%MZ)  $(nproc) cores  $(go version | cut -d' ' -f3)  $(ctags --version | head -1 | cut -d, -f1)"
"$tmp/inspectbench" -files "$tmp/files" -inspect "$tmp/inspect_file" -runs "$RUNS" -sample "$SAMPLE" -typical "$typical" \
	-perlang "$PERLANG" -tsparse "$tmp/tsparse" -whole="$WHOLE"

#!/usr/bin/env bash
# hsymbol against the language servers it asks (bench/symbolbench): warm
# p50 per query of a direct LSP client, hsymbol through its broker, the
# engine in-process, and a rowkit start; a broker's cold start; and, with
# TOKENS=1, the tokens of refs against hgrep -w and hread. Corpora: the
# Go tree's own module ($(go env GOROOT)/src), the Python standard
# library's json and email packages (copied), a generated TypeScript
# project with JSX.
#
# usage: [TOKENS=1] bench/symbol.sh [RUNS] [LANGS]   (LANGS: go,python,typescript)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}
langs=${2:-go,python,typescript}
out=bench/out/symbol
mkdir -p "$out"
go build -o "$out/rowkit" ./cmd/rowkit
go build -o "$out/symbolbench" ./bench/symbolbench
export PATH="$PWD/.tools/bin:$PWD/node_modules/.bin:$PATH"
command -v gopls >/dev/null || { echo "bench/symbol.sh: gopls is missing: run scripts/test once" >&2; exit 1; }
stdlib=$(python3 -c 'import json, os; print(os.path.dirname(os.path.dirname(json.__file__)))')
rm -rf "$out/py" "$out/ts"
mkdir -p "$out/py"
cp -r "$stdlib/json" "$stdlib/email" "$out/py/"
"$out/symbolbench" -gen-ts "$out/ts"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), runs $runs"
"$out/symbolbench" -rowkit "$PWD/$out/rowkit" -runs "$runs" -langs "$langs" -py "$PWD/$out/py" -ts "$PWD/$out/ts" ${TOKENS:+-tokens}

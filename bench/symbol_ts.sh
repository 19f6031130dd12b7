#!/usr/bin/env bash
# Which TypeScript server hsymbol asks: TypeScript 7's own (tsc --lsp, the
# one package-lock.json pins) against typescript-language-server with
# tsserver (installed here into bench/out, for this comparison only), on
# the generated project of bench/symbol.sh: start to first answer, warm
# def, refs and hover, and the references each finds.
#
# usage: bench/symbol_ts.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}
out=bench/out/symbol
mkdir -p "$out/tsls"
if [ ! -x "$out/tsls/node_modules/.bin/typescript-language-server" ]; then
	(cd "$out/tsls" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error typescript-language-server@5.3.0 typescript@6.0.3 >/dev/null)
fi
go build -o "$out/symbolbench" ./bench/symbolbench
export PATH="$PWD/node_modules/.bin:$PATH"
rm -rf "$out/ts"
"$out/symbolbench" -gen-ts "$out/ts"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), runs $runs"
"$out/symbolbench" -runs "$runs" -ts "$out/ts" -tsls "$PWD/$out/tsls/node_modules/.bin/typescript-language-server"

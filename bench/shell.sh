#!/usr/bin/env bash
# bench/shell.sh [FILE] [RUNS]: what running a private command through
# rowkit shell costs: rowkit shell -c 'hread FILE' against hread FILE
# (issue 19's target: at most 1.2x), and for scale a program through the
# shell (cat, which also starts the guardian) against the program alone.
# Runs are interleaved (bench/shellbench); FILE defaults to a 41 KB Go file
# of the Go distribution.
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:-$(go env GOROOT)/src/go/types/expr.go}
runs=${2:-300}
out=bench/out/shell
mkdir -p "$out"
go build -o "$out/rowkit" ./cmd/rowkit
go build -o "$out/shellbench" ./bench/shellbench
ln -sf rowkit "$out/hread"
cat "$file" >/dev/null # warm the page cache
echo "file: $file ($(stat -c %s "$file") bytes), $runs runs each, interleaved, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "load: $(uptime | sed 's/.*load average: //')"
"$out/shellbench" -runs "$runs" \
	-- "$out/hread" "$file" \
	-- "$out/rowkit" shell -c "hread '$file'" \
	-- cat "$file" \
	-- "$out/rowkit" shell -c "cat '$file'"
echo "load: $(uptime | sed 's/.*load average: //')"

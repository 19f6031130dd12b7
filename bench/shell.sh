#!/usr/bin/env bash
# bench/shell.sh [FILE] [RUNS]: what running a command through rowkit shell
# costs over running it with bash itself: rowkit shell -c 'hread FILE'
# against bash -c 'hread FILE' (issue 25's goal: at most 1.2x) and against
# bash -lc 'hread FILE' (what rowkit shell runs, and Codex too: a login
# shell), and against the floor of any shell that runs bash under a process
# of its own (bench/shellfloor: a Go program that only runs bash -lc and
# waits), with hread FILE alone for scale. Every command has the same
# empty home, whose .profile puts hread (a link to the rowkit built here)
# on PATH, so the login profile is the system's and nothing else. Runs are
# interleaved (bench/shellbench); FILE defaults to a 41 KB Go file of the Go
# distribution.
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:-$(go env GOROOT)/src/go/types/expr.go}
runs=${2:-300}
out=$PWD/bench/out/shell
mkdir -p "$out"
go build -o "$out/rowkit" ./cmd/rowkit
go build -o "$out/shellbench" ./bench/shellbench
go build -o "$out/shellfloor" ./bench/shellfloor
ln -sf rowkit "$out/hread"
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
printf 'PATH="%s:$PATH"\n' "$out" > "$home/.profile"
export HOME=$home PATH=$out:$PATH TMPDIR=${TMPDIR:-/tmp}
q=${file//\'/\'\\\'\'}
"$out/rowkit" shell -c true # make the directory of rowkit's commands once
cat "$file" >/dev/null      # warm the page cache
echo "file: $file ($(stat -c %s "$file") bytes), $runs runs each, interleaved, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "load: $(uptime | sed 's/.*load average: //')"
"$out/shellbench" -runs "$runs" \
	-- bash -c "hread '$q'" \
	-- bash -lc "hread '$q'" \
	-- "$out/shellfloor" "hread '$q'" \
	-- "$out/rowkit" shell -c "hread '$q'" \
	-- "$out/hread" "$file" \
	-- "$out/rowkit" --version
echo "load: $(uptime | sed 's/.*load average: //')"

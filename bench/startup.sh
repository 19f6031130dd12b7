#!/usr/bin/env bash
# Start-up cost of a rowkit process (issue 19 section 3), in one run,
# interleaved, process start included, stdout read through a pipe:
#
#   minrows FILE       the floor: a minimal Go program that reads FILE, checks
#                      UTF-8, splits logical lines and prints LINE:HASH TEXT
#                      rows (bench/startup/minrows; no token counting)
#   hread FILE         rowkit under its shell name            target <= 2x minrows
#   bash -c 'hread FILE'          hread run by bash itself
#   rowkit shell -c 'hread FILE'  (when rowkit has the shell)  target <= 1.2x bash -c 'hread FILE'
#   rowkit --version   start-up alone
#   empty              a Go program that does nothing
#
# With BASE=REV it also times hread and --version of rowkit built from the git
# revision REV (new against old in the same run).
#
# With FLOOR=1 it also times the programs under bench/startup/floor, which
# split the distance between minrows and hread: empty linked with cgo, and
# hread's engine alone in a binary without cgo (with a limit so high that no
# token is counted, and as hread runs), with cgo, and with cgo and the
# third-party packages the other commands link (their initialisers run in
# every process).
#
# Prints the median and minimum wall time, mean CPU time (user + system of
# the child) and minor page faults of each, and the ratios of the medians.
# The binaries are built with the project's default build (go build).
#
# usage: bench/startup.sh [RUNS] [FILE]   (default 201, runtime/mpagealloc.go: 41,788 bytes)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-201}
file=${2:-$(go env GOROOT)/src/runtime/mpagealloc.go}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/rowkit" ./cmd/rowkit
ln -s rowkit "$tmp/hread"
go build -o "$tmp/minrows" ./bench/startup/minrows
go build -o "$tmp/empty" ./bench/startup/floor/empty
go build -o "$tmp/timer" ./bench/startup

cmds=(
	-c "minrows FILE|$tmp/minrows|$file"
	-c "hread FILE|$tmp/hread|$file"
	-c "rowkit --version|$tmp/rowkit|--version"
	-c "empty|$tmp/empty"
)
ratios=(-ratio "hread FILE/minrows FILE<=2")
timer_env=()
if "$tmp/rowkit" help shell >/dev/null 2>&1; then
	q=${file//\'/\'\\\'\'}
	# rowkit shell runs bash as a login shell: an empty home, whose profile
	# puts hread on PATH, so that the profile is the system's and no more.
	mkdir "$tmp/home"
	printf 'PATH="%s:$PATH"\n' "$tmp" >"$tmp/home/.profile"
	timer_env=(HOME="$tmp/home" PATH="$tmp:$PATH")
	env "${timer_env[@]}" "$tmp/rowkit" shell -c true # make the directory of rowkit's commands once
	cmds+=(
		-c "bash -c 'hread FILE'|$(command -v bash)|-c|hread '$q'"
		-c "rowkit shell -c 'hread FILE'|$tmp/rowkit|shell|-c|hread '$q'"
	)
	ratios+=(-ratio "rowkit shell -c 'hread FILE'/bash -c 'hread FILE'<=1.2")
else
	echo "(this rowkit has no shell command: rowkit shell -c 'hread FILE' not measured)"
fi
if [ -n "${BASE:-}" ]; then
	mkdir "$tmp/base"
	git archive "$BASE" | tar -x -C "$tmp/base"
	(cd "$tmp/base" && go build -o "$tmp/base-bin/rowkit" ./cmd/rowkit)
	ln -s rowkit "$tmp/base-bin/hread"
	cmds+=(
		-c "hread FILE at $BASE|$tmp/base-bin/hread|$file"
		-c "rowkit --version at $BASE|$tmp/base-bin/rowkit|--version"
	)
	ratios+=(
		-ratio "hread FILE at $BASE/minrows FILE<=2"
		-ratio "hread FILE/hread FILE at $BASE<=1"
		-ratio "rowkit --version/rowkit --version at $BASE<=1"
	)
fi
if [ "${FLOOR:-0}" = 1 ]; then
	for p in cgo hreadnocount hread hreadcgo hreadlibs; do
		go build -o "$tmp/floor-$p" "./bench/startup/floor/$p"
	done
	cmds+=(
		-c "floor: empty + cgo|$tmp/floor-cgo"
		-c "floor: hread alone, no counting|$tmp/floor-hreadnocount|$file"
		-c "floor: hread alone|$tmp/floor-hread|$file"
		-c "floor: hread + cgo|$tmp/floor-hreadcgo|$file"
		-c "floor: hread + cgo + libraries|$tmp/floor-hreadlibs|$file"
	)
	ratios+=(
		-ratio "floor: hread alone, no counting/minrows FILE<=2"
		-ratio "floor: hread alone/minrows FILE<=2"
		-ratio "floor: hread + cgo/minrows FILE<=2"
		-ratio "floor: hread + cgo + libraries/minrows FILE<=2"
	)
fi
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(go version | cut -d' ' -f3), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs, $(stat -c %s "$file") bytes: $file"
env "${timer_env[@]}" "$tmp/timer" -runs "$runs" "${cmds[@]}" "${ratios[@]}"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Times rowkit's commands on a file at the bottom of a deep directory tree,
# against the same commands on the same file one level down, and against a
# base build (before issue 24 item 20 by default), in one run.
#
#   bench/deep.sh [DEPTHS] [RUNS] [BASE_REV]
#
# DEPTHS (default "1000 1500") are the depths of the trees, generated under
# bench/out/deep/ (d/d/.../d/f.py). For each depth and each command
# (rowkit read, inspect_file, hread, hpatch applying a one-line edit) it
# prints the median wall milliseconds of the base build and of this tree,
# their ratio, and this tree's time on the file at depth 1 (the floor: what
# the command costs without the depth). BASE_REV (default 03b7203) is built
# from `git archive` into bench/out/deep/base; an empty BASE_REV skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
depths=${1:-"1000 1500"}
runs=${2:-5}
base_rev=${3-03b7203}
out=bench/out/deep
. bench/builds.sh
builds "$out" "$base_rev"

# tree DEPTH: a workspace with f.py at DEPTH and at depth 1.
tree() {
	local d=$out/tree$1 rel
	rel=$(printf 'd/%.0s' $(seq "$1"))
	if [ ! -f "$d/${rel}f.py" ]; then
		rm -rf "$d" && mkdir -p "$d/$rel" "$d/s"
		printf 'def f():\n    return 1\n' >"$d/${rel}f.py"
		cp "$d/${rel}f.py" "$d/s/f.py"
	fi
	echo "$d"
}

# median_ms DIR CMD...: median wall milliseconds of $runs runs in DIR; an
# hpatch run gets its script on stdin and is undone after each run.
median_ms() {
	local dir=$1 times=() t0 t1
	shift
	for _ in $(seq "$runs"); do
		t0=$(date +%s%N)
		(cd "$dir" && "$@" >/dev/null 2>&1 <"$script") || true
		t1=$(date +%s%N)
		times+=($(((t1 - t0) / 1000000)))
		[ -z "$undo" ] || (cd "$dir" && printf 'def f():\n    return 1\n' >"$undo")
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

hash2=$(printf '    return 1\n' >"$out/line.txt" && "$out/new/hread" "$out/line.txt" | cut -d' ' -f1 | cut -d: -f2)
printf 'median of %d runs, %s, base %s\n' "$runs" "$(date -u '+%Y-%m-%d %H:%M UTC')" "${base_rev:-none}"
printf '%-6s %-14s %9s %9s %7s %12s\n' depth command base_ms ms ratio depth1_ms
for depth in $depths; do
	d=$(tree "$depth")
	rel=$(printf 'd/%.0s' $(seq "$depth"))f.py
	for cmd in read inspect_file hread hpatch; do
		declare -A ms=()
		for b in "${bins[@]}" one; do
			bin=$PWD/$out/${b/one/new}
			file=$rel
			[ "$b" = one ] && file=s/f.py
			script=/dev/null undo=
			case $cmd in
			read) args=("$bin/rowkit" read "$file") ;;
			hpatch)
				script=$PWD/$out/edit-$b-$depth.hp undo=$file
				printf 'in %s\ntype 2:%s "    return 2"\n' "$file" "$hash2" >"$script"
				args=("$bin/hpatch")
				(cd "$d" && "${args[@]}" <"$script" >/dev/null) || { echo "hpatch ($b) did not apply at depth $depth" >&2; exit 1; }
				(cd "$d" && printf 'def f():\n    return 1\n' >"$file")
				;;
			*) args=("$bin/$cmd" "$file") ;;
			esac
			ms[$b]=$(median_ms "$d" "${args[@]}")
		done
		base=${ms[base]:--}
		awk -v dp="$depth" -v c="$cmd" -v b="$base" -v n="${ms[new]}" -v o="${ms[one]}" 'BEGIN {
			printf "%-6s %-14s %9s %9d %7s %12d\n", dp, c, b, n, (b == "-" || n == 0 ? "-" : sprintf("%.1f", b / n)), o }'
	done
done

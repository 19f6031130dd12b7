#!/usr/bin/env bash
# Peak memory and time of hpatch against git apply applying the same edit,
# and against a base build, in one run.
#
#   bench/hpatch-mem.sh [CASES] [RUNS] [BASE_REV]
#
# CASES (default "big many huge"):
#   big   one line replaced in the middle of a 63 MiB file
#   many  one line replaced in each of 1,000 files of 240 KB
#   huge  add EOF "tail\n" to a 1 GiB file
# The inputs are generated under bench/out/hpmem/ (go run ./bench/gen -lf)
# and kept; each run works on a fresh copy. The baseline is git apply of
# the diff hpatch --dry-run prints for the same script (checked to give the
# same bytes). BASE_REV (default 03b7203) is built from git archive; an
# empty BASE_REV skips it. For each command it prints the median wall time,
# the peak RSS (/usr/bin/time), and the RSS over the bytes the script
# touches (the sizes of the files it edits).
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-"big many huge"}
runs=${2:-3}
base_rev=${3-03b7203}
out=$PWD/bench/out/hpmem
. bench/builds.sh
builds "$out" "$base_rev"

# setup CASE: the template workspace $out/CASE/tmpl and its script.
setup() {
	local c=$1 d=$out/$1
	[ -f "$d/ready" ] && return
	rm -rf "$d" && mkdir -p "$d/tmpl"
	case $c in
	big)
		go run ./bench/gen -lf -size 66060288 -o "$d/tmpl/big.txt"
		local n=$(($(wc -l <"$d/tmpl/big.txt") / 2))
		printf 'in big.txt\ntype %s "edited line"\n' "$("$out/new/hread" "$d/tmpl/big.txt" "$n:$n" | cut -d' ' -f1)" >"$d/script.hp"
		;;
	many)
		go run ./bench/gen -lf -size 245760 -o "$d/one.txt"
		local row
		row=$("$out/new/hread" "$d/one.txt" 1000:1000 | cut -d' ' -f1)
		for i in $(seq -w 0 999); do
			cp "$d/one.txt" "$d/tmpl/f$i.txt"
			printf 'in f%s.txt\ntype %s "edited line"\n' "$i" "$row" >>"$d/script.hp"
		done
		;;
	huge)
		go run ./bench/gen -lf -size 1073741824 -o "$d/tmpl/huge.txt"
		printf 'in huge.txt\nadd EOF "tail\\n"\n' >"$d/script.hp"
		;;
	esac
	(cd "$d/tmpl" && "$out/new/hpatch" --dry-run --json <"$d/script.hp" | jq -j .diff >"$d/edit.diff")
	rm -rf "$d/want" && cp -a "$d/tmpl" "$d/want"
	(cd "$d/want" && "$out/new/hpatch" <"$d/script.hp" >/dev/null && rm -rf .rowkit)
	touch "$d/ready"
}

# measure CASE NAME CMD...: runs CMD in a fresh copy $runs times and prints
# "ms kb": median wall milliseconds, peak RSS in KB (the largest run).
measure() {
	local c=$1 name=$2 d=$out/$1 ts=() kb=0 t0 t1 k
	shift 2
	for _ in $(seq "$runs"); do
		rm -rf "$d/ws" && cp -a "$d/tmpl" "$d/ws" && sync
		t0=$(date +%s%N)
		k=$(cd "$d/ws" && /usr/bin/time -f %M "$@" <"$d/input" 2>&1 >/dev/null | tail -1)
		t1=$(date +%s%N)
		ts+=($(((t1 - t0) / 1000000)))
		[ "$k" -gt "$kb" ] && kb=$k
		rm -rf "$d/ws/.rowkit"
		if ! diff -rq "$d/ws" "$d/want" >/dev/null; then
			echo "$c: $name did not give the expected files" >&2
			exit 1
		fi
	done
	printf '%s %s\n' "$(printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')" "$kb"
}

printf 'median of %d runs, %s, base %s\n' "$runs" "$(date -u '+%Y-%m-%d %H:%M UTC')" "${base_rev:-none}"
printf '%-5s %-14s %12s %9s %12s %9s\n' case command touched_MB ms peak_MB peak/touched
for c in $cases; do
	setup "$c"
	d=$out/$c
	touched=$(du -cb "$d"/tmpl/* | tail -1 | cut -f1)
	rows=()
	cp "$d/edit.diff" "$d/input"
	rows+=("git-apply $(GIT_CEILING_DIRECTORIES=$out measure "$c" git-apply git apply "$d/edit.diff")")
	cp "$d/script.hp" "$d/input"
	for b in "${bins[@]}"; do
		rows+=("hpatch-$b $(measure "$c" "hpatch-$b" "$out/$b/hpatch")")
	done
	for r in "${rows[@]}"; do
		read -r name ms kb <<<"$r"
		awk -v c="$c" -v n="$name" -v t="$touched" -v ms="$ms" -v kb="$kb" 'BEGIN {
			printf "%-5s %-14s %12.1f %9d %12.1f %9.2f\n", c, n, t / 1048576, ms, kb / 1024, kb * 1024 / t }'
	done
done

#!/usr/bin/env bash
# Times hread against cat and wc -l on one generated file, in one run.
#
#   bench/hread.sh [SIZE_BYTES] [RUNS]
#
# Prints the median wall time of each command, its throughput, the ratio to
# cat, and hread's peak RSS. The file (default 512 MiB) is written under
# bench/out/ and kept for reruns of the same size.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-536870912}
runs=${2:-5}
mkdir -p bench/out
file=bench/out/hread-$size.txt
bin=bench/out/rowkit
go build -o "$bin" ./cmd/rowkit
ln -sf rowkit bench/out/hread
[ -f "$file" ] || go run ./bench/gen -size "$size" -o "$file"
bytes=$(stat -c %s "$file")
cat "$file" >/dev/null # warm the page cache

# median_ms CMD...: median wall milliseconds of $runs runs (exit status ignored).
median_ms() {
	local times=() t0 t1
	for _ in $(seq "$runs"); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		t1=$(date +%s%N)
		times+=($(((t1 - t0) / 1000000)))
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

peak_rss_kb() {
	/usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}'
}

cat_ms=$(median_ms cat "$file")
printf 'file: %s (%d bytes, %d lines), median of %d runs, %s\n' "$file" "$bytes" "$(wc -l <"$file")" "$runs" "$(date -u +%Y-%m-%d)"
printf '%-22s %9s %10s %12s\n' command ms MB/s ratio_to_cat
report() {
	local name=$1 ms=$2
	awk -v n="$name" -v ms="$ms" -v b="$bytes" -v c="$cat_ms" 'BEGIN {
		printf "%-22s %9d %10.0f %12.2f\n", n, ms, (ms > 0 ? b / 1e6 / (ms / 1000) : 0), (c > 0 ? ms / c : 0) }'
}
report "cat FILE" "$cat_ms"
report "wc -l FILE" "$(median_ms wc -l "$file")"
report "hread FILE" "$(median_ms bench/out/hread "$file")"
report "hread FILE 1:100" "$(median_ms bench/out/hread "$file" 1:100)"
printf 'peak RSS: hread FILE %s KB, hread FILE 1:100 %s KB\n' \
	"$(peak_rss_kb bench/out/hread "$file")" "$(peak_rss_kb bench/out/hread "$file" 1:100)"

#!/usr/bin/env bash
# Times rowkit read against head and cat in one run.
#
#   bench/read.sh [RUNS]
#
# Three inputs, generated under bench/out/ by bench/gen (code and prose
# lines, multi-byte UTF-8, mixed LF / CRLF / lone-CR endings):
#   large.txt  256 MiB: rowkit read shows the first 2000 lines (or 50 KiB)
#              and scans up to its 64 MiB limit; baseline head -n 2000
#   scan.txt   just under 64 MiB: the whole file is scanned (lines counted,
#              content hashed) to the end; baseline cat
#   small.txt  about 40 KB: the whole file is shown; baseline cat
# Prints the median wall time of each command, ratios, scan throughput and
# peak RSS (/usr/bin/time -v).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-21}
mkdir -p bench/out
bin=bench/out/rowkit
go build -o "$bin" ./cmd/rowkit
dir=bench/out/read
mkdir -p "$dir"
[ -f "$dir/large.txt" ] || go run ./bench/gen -size $((256 << 20)) -o "$dir/large.txt"
# head -n -1 drops the line (and any character) the byte count cut.
[ -f "$dir/scan.txt" ] || head -c $(((64 << 20) - 4096)) "$dir/large.txt" | head -n -1 >"$dir/scan.txt"
if [ ! -f "$dir/small.txt" ]; then
	head -c 40960 "$dir/large.txt" | head -n -1 >"$dir/small.txt"
fi
for f in large scan small; do cat "$dir/$f.txt" >/dev/null; done # warm the page cache

# median_us CMD...: median wall microseconds of $runs runs (exit status ignored).
median_us() {
	local times=() t0 t1
	for _ in $(seq "$runs"); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1 || true
		t1=$(date +%s%N)
		times+=($(((t1 - t0) / 1000)))
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
# cpu_us CMD...: mean user+system CPU microseconds per run over $runs runs,
# from the shell's child times: unlike wall time, it barely depends on
# what else the machine is doing.
cpu_us() {
	(
		for _ in $(seq "$runs"); do "$@" >/dev/null 2>&1 || true; done
		times >"$dir/times"
		tail -1 "$dir/times" | awk -v n="$runs" '{
			split($1, u, /[ms]/); split($2, s, /[ms]/)
			printf "%d\n", ((u[1] * 60 + u[2]) + (s[1] * 60 + s[2])) * 1e6 / n }'
	)
}
peak_rss_kb() {
	/usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}'
}
row() { # NAME US BASE_US RSS CPU_US BASE_CPU_US
	awk -v n="$1" -v us="$2" -v b="$3" -v rss="$4" -v cpu="$5" -v bc="$6" 'BEGIN {
		printf "%-38s %9.2f %7.2f %9.2f %7.2f %9s\n", n, us / 1000, (b > 0 ? us / b : 0), cpu / 1000, (bc > 0 ? cpu / bc : 0), rss }'
}

rk() { "$bin" read --root "$dir" "$@"; }
printf 'rowkit read, %s, median of %d runs, %d cores (shared machine: figures are noisy)\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$runs" "$(nproc)"
printf 'large.txt %d bytes; scan.txt %d bytes, %d lines; small.txt %d bytes, %d lines\n' \
	"$(stat -c %s "$dir/large.txt")" "$(stat -c %s "$dir/scan.txt")" "$(wc -l <"$dir/scan.txt")" \
	"$(stat -c %s "$dir/small.txt")" "$(wc -l <"$dir/small.txt")"
printf '%-38s %9s %7s %9s %7s %9s\n' command wall_ms ratio cpu_ms ratio peak_KB

pair() { # LABEL BASE_LABEL FILE BASE_CMD...
	local label=$1 blabel=$2 file=$3
	shift 3
	local bw bc w c
	bw=$(median_us "$@") bc=$(cpu_us "$@")
	w=$(median_us rk "$file") c=$(cpu_us rk "$file")
	row "$blabel" "$bw" "$bw" "$(peak_rss_kb "$@")" "$bc" "$bc"
	row "$label" "$w" "$bw" "$(peak_rss_kb "$bin" read --root "$dir" "$file")" "$c" "$bc"
	last_wall=$w last_cpu=$c
}
pair "rowkit read large.txt (2000 lines)" "head -n 2000 large.txt" large.txt head -n 2000 "$dir/large.txt"
pair "rowkit read scan.txt (whole scan)" "cat scan.txt" scan.txt cat "$dir/scan.txt"
awk -v b="$(stat -c %s "$dir/scan.txt")" -v w="$last_wall" -v c="$last_cpu" 'BEGIN {
	printf "scan throughput: %.0f MB/s wall, %.0f MB/s of CPU time (target >= 1000)\n", b / w, b / c }'
pair "rowkit read small.txt (whole file)" "cat small.txt" small.txt cat "$dir/small.txt"
awk -v w="$last_wall" -v c="$last_cpu" 'BEGIN { printf "whole 40 KB file: %.2f ms wall, %.2f ms CPU (target < 5 ms wall)\n", w / 1000, c / 1000 }'

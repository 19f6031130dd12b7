#!/usr/bin/env bash
# bench/review.sh: time `rowkit review --format json` against the raw git
# commands it needs, run back to back from one shell script, in the same
# run, on generated repositories. Prints the median of RUNS runs of each,
# the ratio, and the number of git processes rowkit spawned.
#
#   bench/review.sh [RUNS]        (default 15)
#
# Two repositories are generated under a temporary directory:
#   large  5,000 tracked files, 200 changes in each of the four scopes
#   small  1,000 tracked files, 300 changes in all (75 per scope)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/rowkit" ./cmd/rowkit

export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME="$work"

# gen DIR FILES PER_SCOPE
gen() {
	local dir=$1 files=$2 per=$3 i
	git init -q -b main "$dir"
	for ((i = 0; i < files; i++)); do
		mkdir -p "$dir/d$((i % 50))"
		printf 'file %d\nline two\nline three\n' "$i" >"$dir/d$((i % 50))/f$i.txt"
	done
	git -C "$dir" add -A && git -C "$dir" commit -q -m base
	git -C "$dir" checkout -q -b feature
	# committed: modifications, renames and additions
	for ((i = 0; i < per; i++)); do
		case $((i % 3)) in
		0) echo more >>"$dir/d$((i % 50))/f$i.txt" ;;
		1) git -C "$dir" mv "d$((i % 50))/f$i.txt" "d$((i % 50))/moved$i.txt" ;;
		2) echo new >"$dir/d$((i % 50))/added$i.txt" ;;
		esac
	done
	git -C "$dir" add -A && git -C "$dir" commit -q -m feature
	# staged, unstaged and untracked, on other files
	for ((i = per; i < 2 * per; i++)); do echo staged >>"$dir/d$((i % 50))/f$i.txt"; done
	git -C "$dir" add -A
	for ((i = 2 * per; i < 3 * per; i++)); do echo unstaged >>"$dir/d$((i % 50))/f$i.txt"; done
	for ((i = 0; i < per; i++)); do echo u >"$dir/d$((i % 50))/untracked$i.txt"; done
}

# The git commands a review needs, as rowkit runs them (hardening flags
# included), one after the other; the object ids rowkit learns from earlier
# calls are written in literally.
baseline() {
	local dir=$1 head base
	head=$(git -C "$dir" rev-parse HEAD)
	base=$(git -C "$dir" rev-parse refs/heads/main)
	cat >"$work/baseline.sh" <<SH
cd '$dir'
g() { git -C '$dir' --no-pager -c core.fsmonitor= -c diff.external= "\$@"; }
d="--raw --numstat -z -M -C --no-ext-diff --no-textconv --no-color --ignore-submodules=dirty"
g rev-parse --is-bare-repository --absolute-git-dir --show-toplevel HEAD --symbolic-full-name HEAD -- >/dev/null
g config --list -z --show-scope >/dev/null
g for-each-ref '--format=%(refname)%00%(objectname)%00%(symref)' refs/remotes/origin/HEAD refs/remotes/origin/main refs/remotes/origin/master refs/heads/main refs/heads/master >/dev/null
g merge-base $base $head >/dev/null
g diff \$d $base...$head -- >/dev/null
g diff \$d --cached $head -- >/dev/null
g diff \$d -- >/dev/null
g ls-files -z -t --stage --others --exclude-standard -- >/dev/null
SH
}

now() { date +%s%N; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", (b - a) / 1e6 }'; }

# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

bench() {
	local name=$1 dir=$2 i t0 t1
	baseline "$dir"
	: >"$work/raw.ms"
	: >"$work/rowkit.ms"
	sh "$work/baseline.sh" # warm the caches
	"$work/rowkit" review --repo "$dir" --format json >"$work/report.json"
	for ((i = 0; i < runs; i++)); do
		t0=$(now)
		sh "$work/baseline.sh"
		t1=$(now)
		ms "$t0" "$t1" >>"$work/raw.ms"
		t0=$(now)
		"$work/rowkit" review --repo "$dir" --format json >/dev/null
		t1=$(now)
		ms "$t0" "$t1" >>"$work/rowkit.ms"
	done
	local raw rk calls counts
	raw=$(median <"$work/raw.ms")
	rk=$(median <"$work/rowkit.ms")
	calls=$(sed -n 's/^  "gitCalls": \([0-9]*\)$/\1/p' "$work/report.json")
	counts=$(tr -d ' \n' <"$work/report.json" | sed -n 's/.*"counts":{\([^}]*\)}.*/\1/p')
	printf '%-6s %s\n' "$name" "$counts"
	printf '%-6s raw git %8.1f ms   rowkit review %8.1f ms   ratio %.2f   git processes %s (raw script: 8)\n' \
		"$name" "$raw" "$rk" "$(awk -v a="$rk" -v b="$raw" 'BEGIN { print a / b }')" "$calls"
}

gen "$work/large" 5000 200 >/dev/null
gen "$work/small" 1000 75 >/dev/null
echo "rowkit review vs raw git, median of $runs runs, $(nproc) cores, $(git --version)"
bench large "$work/large"
bench small "$work/small"

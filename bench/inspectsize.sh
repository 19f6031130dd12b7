#!/usr/bin/env bash
# Time and memory of inspect_file against file size: generated files of 1,
# 7 and 30 MB (SIZES, in MiB) in every supported language (bench/biggen:
# Go, Python, TypeScript, JavaScript with JSX, Markdown, JSON), each run
# RUNS times (default 5), interleaved with baselines on the same file:
# tree-sitter's own C parse (bench/tsparse) for Python, TypeScript and
# JavaScript, of the whole file and in pieces of 64 KiB as inspect_file
# parses a large file (the floor under it), gofmt -l for Go (go/parser and
# the printer), jq empty for JSON; Markdown has none installed. Prints the
# median wall time, the mean CPU time (user + system) and the peak RSS
# (wait4) of each, the ratios of inspect_file to each baseline, MB/s, and
# the target of issue 24 for 7 MB files (at most 1 s and 100 MB).
#
# usage: [RUNS=5] [SIZES="1 7 30"] bench/inspectsize.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
sizes=${SIZES:-1 7 30}
out=bench/out/_inspect # "_": the go tool ignores it
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/rowkit" ./cmd/rowkit
ln -s rowkit "$tmp/inspect_file"
go build -o "$tmp/biggen" ./bench/biggen
bench/tsparse/build.sh "$tmp/tsparse"
command -v jq >/dev/null || { echo "bench/inspectsize.sh: install jq (apt-get install jq)" >&2; exit 1; }

files=()
for mb in $sizes; do
	for l in go:go python:py typescript:ts javascript:js markdown:md json:json; do
		f="$out/${mb}m.${l##*:}"
		[ -f "$f" ] || "$tmp/biggen" -lang "${l%%:*}" -size $((mb << 20)) -o "$f"
		files+=("$f")
	done
done
echo "$(date -u +%Y-%m-%dT%H:%MZ)  $(nproc) cores  load $(cut -d' ' -f1-3 /proc/loadavg)  $(go version | cut -d' ' -f3)  $runs runs"
python3 - "$runs" "$tmp" "${files[@]}" <<'PY'
import os, statistics, subprocess, sys, time

runs, tmp, files = int(sys.argv[1]), sys.argv[2], sys.argv[3:]

def measure(argv):
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1) or (code == 1 and "gofmt" not in argv[0]):
        sys.exit(f"{argv}: exit {code}: {err.decode()[:200]}")
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024

def baselines(f):
    ext = f.rsplit(".", 1)[1]
    if ext in ("py", "ts", "js"):
        return [("tree-sitter C, whole", [f"{tmp}/tsparse", f]),
                ("tree-sitter C, pieces", [f"{tmp}/tsparse", "-P", "65536", f])]
    if ext == "go":
        return [("gofmt -l", ["gofmt", "-l", f])]
    if ext == "json":
        return [("jq empty", ["jq", "empty", f])]
    return []

def stats(v):
    return statistics.median(x[0] for x in v), statistics.mean(x[1] for x in v), max(x[2] for x in v)

print(f"{'file':10} {'MB':>6} | {'command':22} {'wall ms':>8} {'cpu ms':>8} {'RSS MB':>7} {'MB/s':>6} | {'inspect_file / it: wall':>22} {'cpu':>6} {'RSS':>6}")
for f in files:
    size = os.path.getsize(f) / 1e6
    cmds = [("inspect_file", [f"{tmp}/inspect_file", f])] + baselines(f)
    res = {name: [] for name, _ in cmds}
    for _ in range(runs):
        for name, argv in cmds:  # interleaved, so load hits all alike
            res[name].append(measure(argv))
    w, c, r = stats(res["inspect_file"])
    for name, _ in cmds:
        bw, bc, br = stats(res[name])
        line = f"{os.path.basename(f):10} {size:6.1f} | {name:22} {bw*1000:8.0f} {bc*1000:8.0f} {br:7.0f} {size/bw:6.1f} |"
        if name != "inspect_file":
            line += f" {w/bw:21.2f}x {c/bc:5.2f}x {r/br:5.2f}x"
        elif os.path.basename(f).startswith("7m."):
            line += f" 7 MB target: wall {'met' if w <= 1 else 'NOT met'}, cpu {'met' if c <= 1 else 'NOT met'}, RSS {'met' if r <= 100 else 'NOT met'}"
        print(line, flush=True)
PY

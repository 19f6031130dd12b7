#!/usr/bin/env bash
# Times hgrep against ripgrep, in one run, interleaved:
#   hgrep PATTERN   vs   rg --json PATTERN   vs   rg -n PATTERN
# on four cases: a small generated tree (1,000 files, 21 MB) with a rare
# pattern, where the fixed cost of a process dominates; and over the Go
# source tree a rare pattern (13 rows), a medium one (267 rows in 114
# files, every row within the token limit) and a common one (about
# 139,000 lines; token admission stops hgrep early). Prints the median and
# minimum wall time of RUNS runs, the mean CPU time (user + system, the
# process and the children it reaped), their ratios, and the peak RSS
# (hgrep's includes the rg it runs and reaps). FLOOR=1 adds two programs
# that bound what a wrapper of rg can cost (bench/hgrepfloor): one that
# runs rg --json and copies its output, and the same with cgo linked.
# BASE=REV adds hgrep built from the git revision REV.
#
# usage: [FLOOR=1] [BASE=REV] bench/hgrep.sh [RUNS]    (default 15)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}
corpus=$(go env GOROOT)/src
small=bench/out/_hgrep-small # "_": the go tool ignores it
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/rowkit" ./cmd/rowkit
ln -s rowkit "$tmp/hgrep"
extra=()
if [ -n "${BASE:-}" ]; then
	mkdir "$tmp/base" "$tmp/base-bin"
	git archive "$BASE" | tar -x -C "$tmp/base"
	(cd "$tmp/base" && go build -o "$tmp/base-bin/rowkit" ./cmd/rowkit)
	ln -s rowkit "$tmp/base-bin/hgrep"
	extra+=("hgrep at $BASE=$tmp/base-bin/hgrep")
fi
if [ "${FLOOR:-}" = 1 ]; then
	CGO_ENABLED=0 go build -o "$tmp/rgcopy" ./bench/hgrepfloor
	CGO_ENABLED=1 go build -tags cgo -o "$tmp/rgcopycgo" ./bench/hgrepfloor
	extra+=("rg copy=$tmp/rgcopy" "rg copy cgo=$tmp/rgcopycgo")
fi
rg=$(command -v rg)
if [ ! -f "$small/.done" ]; then
	rm -rf "$small"
	python3 - "$small" <<'PY'
import os, random, sys
# 1,000 Go-like files of about 21 KB in 10 directories; a few lines hold
# the rare pattern's name.
out = sys.argv[1]
r = random.Random(24)
words = ["alpha", "beta", "gamma", "delta", "value", "count", "offset", "index", "buffer", "reader",
         "writer", "scanner", "token", "parser", "result", "config", "state", "entry", "record", "cache"]
for d in range(10):
    os.makedirs(f"{out}/pkg{d}", exist_ok=True)
    for i in range(100):
        lines, n, k = [f"package pkg{d}", ""], 0, 0
        while n < 21000:
            a, b, c = r.choice(words), r.choice(words), r.choice(words)
            name = "Needle" if r.random() < 0.00002 else a.capitalize() + b.capitalize()
            k += 1
            ls = [f"// {name}{k} returns the {a} of the {b} {c}.",
                  f"func (s *{c.capitalize()}) {name}{k}(x int) (int, error) {{",
                  f"\tif x > {r.randint(0, 999)} {{",
                  f"\t\treturn s.{a} + x, nil",
                  "\t}",
                  f"\treturn 0, fmt.Errorf(\"{b}: %d\", x)",
                  "}", ""]
            lines += ls
            n += sum(len(l) + 1 for l in ls)
        with open(f"{out}/pkg{d}/f{i:03}.go", "w") as f:
            f.write("\n".join(lines))
PY
	touch "$small/.done"
fi

echo "$(rg --version 2>/dev/null | sed -n 1p), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs"
echo "small tree: $small ($(find "$small" -name '*.go' | wc -l) files, $(du -sb "$small" | cut -f1) bytes); Go tree: $corpus ($(du -sh "$corpus" | cut -f1))"
python3 - "$runs" "$corpus" "$small" "$tmp/hgrep" "$rg" "${extra[@]}" <<'PY'
import os, statistics, subprocess, sys, time

runs, corpus, small, hgrep, rg = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
extra = [a.split("=", 1) for a in sys.argv[6:]]  # NAME=PROGRAM, run as PROGRAM PATTERN

def measure(argv, cwd):
    """Wall seconds, CPU seconds and peak RSS in MiB (the process and the
    children it reaped), exit status and stdout bytes of one run."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    n = 0
    while chunk := p.stdout.read(1 << 16):
        n += len(chunk)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), n

cases = [
    ("small tree, rare", small, "Needle"),
    ("Go tree, rare", corpus, "func \\(\\w+ \\*Reader\\) Read\\b"),
    ("Go tree, medium", corpus, "Deprecated:"),
    ("Go tree, common", corpus, "err"),
]
for name, cwd, pat in cases:
    cmds = {
        "hgrep": [hgrep, pat],
        "rg --json": [rg, "--no-config", "--json", pat],
        "rg -n": [rg, "--no-config", "-n", pat],
    }
    for k, prog in extra:
        cmds[k] = [prog, pat]
    res = {k: [] for k in cmds}
    for _ in range(runs):
        for k, argv in cmds.items():  # interleaved, so load hits all alike
            res[k].append(measure(argv, cwd))
    med = {k: statistics.median(r[0] for r in v) for k, v in res.items()}
    best = {k: min(r[0] for r in v) for k, v in res.items()}
    cpu = {k: statistics.mean(r[1] for r in v) for k, v in res.items()}
    print(f"\n{name}: pattern {pat!r}")
    for k, v in res.items():
        last = v[-1]
        print(f"  {k:16} median {med[k]*1000:7.1f} ms  min {best[k]*1000:7.1f} ms  cpu {cpu[k]*1000:7.1f} ms  peak RSS {max(r[2] for r in v):6.1f} MiB  exit {last[3]}  stdout {last[4]:>10,} bytes")
    for k in cmds:
        if k != "rg --json":
            print(f"  {k} / rg --json: median {med[k]/med['rg --json']:.2f}x  min {best[k]/best['rg --json']:.2f}x  cpu {cpu[k]/cpu['rg --json']:.2f}x")
PY

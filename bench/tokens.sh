#!/usr/bin/env bash
# What counting o200k_base tokens costs a command that runs once per call,
# in one run, side by side with the baselines (issue 9 section 2):
#   hread FILE          vs  cat FILE          a ~40 KB Go source file, whose
#                                            rows pass 15,000 bytes and so
#                                            are counted
#   hgrep PATTERN       vs  rg --json PATTERN over the Go tree: a rare pattern
#                                            (1 KB of rows, never counted)
#                                            and 'Deprecated:' (26 KB of
#                                            rows, all counted, complete)
# Prints the median and minimum wall time of RUNS interleaved runs (process
# start included), their ratios, and each command's peak RSS from GNU time
# (the largest of the process and the children it reaped: for hgrep, rg).
# wait4 from Python would report at least Python's own RSS, which a child
# inherits across fork and exec in ru_maxrss.
#
# usage: bench/tokens.sh [RUNS] [FILE]   (default 41, runtime/mpagealloc.go)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-41}
goroot=$(go env GOROOT)
file=${2:-$goroot/src/runtime/mpagealloc.go}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/rowkit" ./cmd/rowkit
ln -s rowkit "$tmp/hread"
ln -s rowkit "$tmp/hgrep"
rg=$(command -v rg)
[ -x /usr/bin/time ] || { echo "bench/tokens.sh: needs GNU time (apt-get install time)" >&2; exit 1; }

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(go version | cut -d' ' -f3), $(rg --version | sed -n 1p), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs"
python3 - "$runs" "$file" "$goroot/src" "$tmp" "$rg" <<'PY'
import os, statistics, subprocess, sys, time

runs, file, corpus, tmp, rg = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]

def measure(argv, cwd):
    """Wall seconds, exit status and stdout bytes of one run."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    n = 0
    while chunk := p.stdout.read(1 << 16):
        n += len(chunk)
    p.wait()
    return time.perf_counter() - t, p.returncode, n

def peak_rss_mib(argv, cwd):
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", "/dev/stderr", *argv], cwd=cwd,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return int(r.stderr.strip().splitlines()[-1]) / 1024

def compare(title, cmds, cwd, base, target, rss_target=16):
    res = {k: [] for k in cmds}
    for _ in range(runs):
        for k, argv in cmds.items():  # interleaved, so load hits all alike
            res[k].append(measure(argv, cwd))
    med = {k: statistics.median(r[0] for r in v) for k, v in res.items()}
    best = {k: min(r[0] for r in v) for k, v in res.items()}
    rss = {k: max(peak_rss_mib(argv, cwd) for _ in range(3)) for k, argv in cmds.items()}
    print(f"\n{title}:")
    for k, v in res.items():
        last = v[-1]
        print(f"  {k:12} median {med[k]*1000:7.2f} ms  min {best[k]*1000:7.2f} ms  peak RSS {rss[k]:5.1f} MiB  exit {last[1]}  stdout {last[2]:>9,} bytes")
    ours = next(iter(cmds))
    rss = rss[ours]
    print(f"  {ours} / {base}: median {med[ours]/med[base]:.2f}x, min {best[ours]/best[base]:.2f}x (target <= {target}x); peak RSS {rss:.1f} MiB (target < {rss_target} MiB)")

size = os.path.getsize(file)
compare(f"hread of {file} ({size:,} bytes)",
        {"hread FILE": [f"{tmp}/hread", file], "cat FILE": ["cat", file]},
        os.path.dirname(file), "cat FILE", 3)
for pat in ["func \\(\\w+ \\*Reader\\) Read\\b", "Deprecated:"]:
    compare(f"hgrep {pat!r} over {corpus}",
            {"hgrep": [f"{tmp}/hgrep", pat], "rg --json": [rg, "--no-config", "--json", pat]},
            corpus, "rg --json", 1.1)
PY

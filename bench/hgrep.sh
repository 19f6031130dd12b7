#!/usr/bin/env bash
# Times hgrep against ripgrep on the Go source tree, in one run:
#   hgrep PATTERN   vs   rg --json PATTERN   vs   rg -n PATTERN
# for a rare pattern (every row fits the token limit) and a common one
# (token admission stops hgrep early). Prints the median wall time of RUNS
# interleaved runs and the minimum (steadier on a shared machine), their
# ratios, and the peak RSS (hgrep's includes the rg it runs and reaps).
#
# usage: bench/hgrep.sh [RUNS]    (default 15)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}
corpus=$(go env GOROOT)/src
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/rowkit" ./cmd/rowkit
ln -s rowkit "$tmp/hgrep"
rg=$(command -v rg)

echo "corpus: $corpus ($(du -sh "$corpus" | cut -f1)), $(rg --version 2>/dev/null | sed -n 1p), $(nproc) cores, $runs runs"
python3 - "$runs" "$corpus" "$tmp/hgrep" "$rg" <<'PY'
import os, statistics, subprocess, sys, time

runs, corpus, hgrep, rg = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]

def measure(argv):
    """Wall seconds, peak RSS in MiB (the process and the children it
    reaped), exit status and stdout bytes of one run."""
    out = open(os.devnull, "wb")
    t = time.perf_counter()
    p = subprocess.Popen(argv, cwd=corpus, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    n = 0
    while chunk := p.stdout.read(1 << 16):
        n += len(chunk)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t, ru.ru_maxrss / 1024, p.returncode, n

cases = [("rare", "func \\(\\w+ \\*Reader\\) Read\\b"), ("common", "err")]
for name, pat in cases:
    cmds = {
        "hgrep": [hgrep, pat],
        "rg --json": [rg, "--no-config", "--json", pat],
        "rg -n": [rg, "--no-config", "-n", pat],
    }
    res = {k: [] for k in cmds}
    for _ in range(runs):
        for k, argv in cmds.items():  # interleaved, so load hits all alike
            res[k].append(measure(argv))
    med = {k: statistics.median(r[0] for r in v) for k, v in res.items()}
    best = {k: min(r[0] for r in v) for k, v in res.items()}
    print(f"\n{name} pattern {pat!r}:")
    for k, v in res.items():
        last = v[-1]
        print(f"  {k:10} median {med[k]*1000:7.1f} ms  min {best[k]*1000:7.1f} ms  peak RSS {max(r[1] for r in v):6.1f} MiB  exit {last[2]}  stdout {last[3]:>10,} bytes")
    print(f"  median ratios: hgrep / rg --json = {med['hgrep']/med['rg --json']:.2f}x   hgrep / rg -n = {med['hgrep']/med['rg -n']:.2f}x")
    print(f"  min ratios:    hgrep / rg --json = {best['hgrep']/best['rg --json']:.2f}x   hgrep / rg -n = {best['hgrep']/best['rg -n']:.2f}x")
PY

#!/usr/bin/env bash
# Measures what rowkit router adds to Codex's requests, against passthrough
# (the same binary forwarding everything unchanged) and against the
# scripted upstream reached directly, all in one run:
#
#   bench/router.sh [REQUESTS] [RSS_REQUESTS]
#
# 1. p50/p99 of a whole request (the Codex 0.169 request recorded in
#    internal/router/testdata/codex-0.169/calls.json, 39 KB, and a long
#    session made from it, 1 MiB of carried calls), answered by a stream of
#    107 events with a routed hpatch call (REQUESTS each, default 300);
# 2. p50/p99 of each streamed event batch's delay, upstream write to
#    client read, with the upstream pacing 20 batches 2 ms apart;
# 3. the router's resident memory over RSS_REQUESTS long-session requests
#    (default 5,000).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-300}
rss=${2:-5000}
mkdir -p bench/out
go build -o bench/out/rowkit ./cmd/rowkit
go build -o bench/out/routerbench ./bench/routerbench
bin=$(cd bench/out && pwd)/rowkit
printf 'rowkit router, %s; %s cores, load %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
bench/out/routerbench -bin "$bin" -request internal/router/testdata/codex-0.169/calls.json -n "$n" -rss "$rss"
printf '\nload after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# bench/mcp-signal.sh [BASELINE_BINARY] [RUNS]: how long rowkit mcp takes to
# exit after SIGTERM while a search runs. The search is a ripgrep stand-in on
# PATH that runs for 30 s (a real search of a large tree takes 10 to 15 s;
# the stand-in makes the wait exact); the baseline is that search's own
# length, and, when given, another rowkit binary (e.g. one built before
# the change) measured the same way in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out/mcp-signal
mkdir -p "$out/bin" "$out/ws"
go build -o "$out/rowkit" ./cmd/rowkit
printf '#!/bin/sh\nexec sleep 30\n' > "$out/bin/rg"
chmod +x "$out/bin/rg"
echo needle > "$out/ws/a.txt"
runs=${2:-3}

# once BINARY: prints the seconds from SIGTERM to exit, after a search started.
once() {
	local bin=$1 pid t0 t1
	coproc SRV { PATH="$PWD/$out/bin:$PATH" exec "$bin" mcp --root "$PWD/$out/ws" 2>/dev/null; }
	pid=$SRV_PID
	echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' >&"${SRV[1]}"
	read -r _ <&"${SRV[0]}"
	echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"${SRV[1]}"
	echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"pattern":"needle"}}}' >&"${SRV[1]}"
	sleep 1
	t0=$(date +%s.%N)
	kill -TERM "$pid"
	wait "$pid" || true
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "load: $(uptime | sed 's/.*load average: //')"
echo "search length (the stand-in): 30 s; SIGTERM sent 1 s into it"
for bin in "$out/rowkit" ${1:+"$1"}; do
	m=$(for _ in $(seq "$runs"); do once "$bin"; done | median)
	printf '%-40s exit after %8.3f s (median of %d), %.4f of the remaining search\n' "$bin" "$m" "$runs" "$(echo "$m / 29" | bc -l)"
done

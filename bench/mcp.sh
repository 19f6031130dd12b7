#!/usr/bin/env bash
# Measures rowkit mcp from a real MCP client (the Go SDK, launching the
# server as a subprocess over stdio, as Claude Code or Cursor do):
#
#   bench/mcp.sh [CALLS] [RSS_CALLS]
#
# 1. round-trip latency p50/p99 of read_file, inspect_file, search and
#    inspect_repository over CALLS calls (default 200), and of search over
#    the whole Go tree (a rare pattern and Deprecated:), next to the same
#    work through the CLI (one process per call: rowkit read, inspect,
#    grep, review), from the Go SDK client and from the TypeScript SDK
#    client (the CLI timed once, printed beside both), and the floor under
#    read_file: the TypeScript client's round trip to bench/mcpfloor, a
#    server on the same SDK whose tool answers read_file's text ready-made;
# 2. the server's resident memory after RSS_CALLS calls (default 10,000);
# 3. the tokens of inspect_file's text (and of the JSON envelope) against
#    the file's verified rows, over the Go tree, the Python standard
#    library and npm.
# The file is $(go env GOROOT)/src/go/printer/nodes.go (1,999 lines),
# copied with a small git repository into bench/out/_mcp/.
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-200}
rss_calls=${2:-10000}
out=bench/out/_mcp # a leading _ keeps the copied Go file out of go build ./...
rm -rf "$out"
mkdir -p "$out/ws/repo"
bin=bench/out/rowkit
go build -o "$bin" ./cmd/rowkit
go build -o bench/out/mcpbench ./bench/mcpbench
go build -o bench/out/mcpfloor ./bench/mcpfloor
bin=$(cd "$(dirname "$bin")" && pwd)/rowkit
src=$(go env GOROOT)/src/go/printer/nodes.go
cp "$src" "$out/ws/nodes.go"
(
	cd "$out/ws/repo"
	git init -q -b main
	cp "$src" nodes.go
	git -c user.name=b -c user.email=b@example.com add nodes.go
	git -c user.name=b -c user.email=b@example.com commit -q -m base
	echo "// changed" >>nodes.go
	echo new >new.txt
)
ws=$(cd "$out/ws" && pwd)
printf 'rowkit mcp, %s, %s lines in nodes.go, %d calls per tool; %s cores, load %s\n' \
	"$(date -u '+%Y-%m-%d %H:%M UTC')" "$(wc -l <"$ws/nodes.go")" "$calls" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
tree=$(go env GOROOT)/src
bench/out/mcpbench latency -bin "$bin" -dir "$ws" -file nodes.go -repo repo -tree "$tree" -n "$calls" -json "$out/works.json"
# The same calls from the official TypeScript SDK client (what Claude Code,
# Codex and Cursor build on; needs npm ci at the repository root).
node bench/mcpts/latency.mjs "$bin" "$ws" "$tree" "$out/works.json" "$calls"
# The floor under read_file from the same client: a server on the same SDK
# whose tool does no work, answering read_file's very text (bench/mcpfloor).
node bench/mcpts/floor.mjs "$bin" "$(cd bench/out && pwd)/mcpfloor" "$ws" nodes.go "$ws/../read_file.txt" "$calls"
bench/out/mcpbench rss -bin "$bin" -dir "$ws" -file nodes.go -n "$rss_calls"
py=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])' 2>/dev/null || true)
npmdir=$(npm root -g 2>/dev/null)/npm
corpora=("$(go env GOROOT)/src" "$(go env GOROOT)/src/net/http")
[ -n "$py" ] && [ -d "$py" ] && corpora+=("$py")
[ -d "$npmdir" ] && corpora+=("$npmdir")
bench/out/mcpbench tokens "${corpora[@]}"

#!/usr/bin/env bash
# What the real agent clients hand their model from rowkit (issue 18):
#
#   bench/clients.sh
#
# Runs BenchmarkModelChannel (internal/mcpserver/channel_test.go): the
# Codex CLI and Claude Code, from package-lock.json, offline against the
# scripted model of internal/agenttest, with rowkit mcp serving
# $(go env GOROOT)/src and the Python standard library, once with
# --structured (what every client got before issue 18) and once without.
# For each request it prints the o200k tokens of rowkit's text (the
# baseline, from the same server), of what the client handed the model
# (its own wrapper included), their ratio, the bytes the model got and
# whether the client cut the output (a truncation marker or a saved-file
# preview). The hread cases run in the client's shell.
set -euo pipefail
cd "$(dirname "$0")/.."
printf 'rowkit %s, codex %s, claude %s; %s cores, load %s\n' \
	"$(git rev-parse --short HEAD)" \
	"$(node_modules/.bin/codex --version | awk '{print $2}')" \
	"$(node_modules/.bin/claude --version | awk '{print $1}')" \
	"$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
go test ./internal/mcpserver -run '^$' -bench ModelChannel -benchtime 1x |
	awk '
	/^BenchmarkModelChannel\// {
		split($1, p, "/"); sub(/-[0-9]+$/, "", p[4])
		for (i = 3; i < NF; i += 2) m[$(i+1)] = $i
		printf "%-7s %-11s %-25s %9d %9d %7.3f %11d %s\n", p[2], p[3], p[4], m["text_tok"], m["model_tok"], m["x"], m["model_bytes"], (m["cut"] == 1 ? "cut" : "whole")
		next
	}
	/^(FAIL|---|ok|PASS)/ || /^    / { print }
	BEGIN { printf "%-7s %-11s %-25s %9s %9s %7s %11s %s\n", "client", "mode", "request", "text_tok", "model_tok", "x", "model_bytes", "model got" }'

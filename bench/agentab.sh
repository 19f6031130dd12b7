#!/usr/bin/env bash
# The played-model benchmark of issue 26 (bench/agentab, see bench/README.md):
#
#   bench/agentab.sh [TASKS] [CONFIGS]
#
# Builds rowkit and agentab, then replays every task's recorded plan
# (bench/agentab/tasks/*/plan.json) in the four configurations against the
# real clients of package-lock.json (Codex CLI, Claude Code), offline, with
# internal/agenttest's server playing the model; records each session in
# bench/agentab/sessions/TASK/CONFIG/ (session.jsonl.gz and figures.json)
# and prints the figures and the table. TASKS and CONFIGS are
# comma-separated subsets (default: all). A plan step that no longer
# applies, a client that fails, or a task whose test does not pass at the
# end fails the run.
#
# The task trees come from the repositories' history: the git directories
# in AGENTAB_COBRA_GIT and AGENTAB_SQLPARSE_GIT (defaults: the snapshots
# the search tool's fetch leaves in /work/.mirror). Needs go, git,
# ripgrep, Debian's python3 with python3-pytest, node and npm ci's
# node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/out
go build -o bench/out/rowkit ./cmd/rowkit
go build -o bench/out/agentab ./bench/agentab
printf 'rowkit %s, codex %s, claude %s; %s; %s cores, load %s\n' \
	"$(git rev-parse --short HEAD)" \
	"$(node_modules/.bin/codex --version | awk '{print $2}')" \
	"$(node_modules/.bin/claude --version | awk '{print $1}')" \
	"$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
args=()
[ -n "${1:-}" ] && args+=(-tasks "$1")
[ -n "${2:-}" ] && args+=(-configs "$2")
bench/out/agentab run -rowkit bench/out/rowkit "${args[@]}"
echo
bench/out/agentab table

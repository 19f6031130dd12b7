// Round-trip latency of rowkit mcp's tools from the official TypeScript MCP
// SDK client (the client Claude Code, Codex and Cursor build on), over
// stdio, beside the same work through the CLI (one process per call, timed
// by mcpbench in the same run): bench/mcp.sh runs it after the Go client.
//
// usage: node latency.mjs ROWKIT DIR TREE WORKS.json CALLS
//
// WORKS.json is mcpbench latency -json's: each work's tool and arguments,
// and the CLI's p50 and p99 for the same work. TREE is served as a second
// root ("" for none).
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [bin, dir, tree, worksFile, callsArg] = process.argv.slice(2);
const calls = Number(callsArg ?? 200);
const works = JSON.parse(readFileSync(worksFile, 'utf8'));
const args = ['mcp', '--root', dir];
if (tree) args.push('--root', tree);
const transport = new StdioClientTransport({ command: bin, args, cwd: dir, stderr: 'ignore' });
const client = new Client({ name: 'rowkit-bench', version: '1.0.0' });
await client.connect(transport);
await client.listTools(); // the client caches output schemas and validates results against them

const pct = (xs, p) => xs[Math.max(0, Math.min(xs.length - 1, Math.round(p * xs.length) - 1))];
const cols = ['ts_p50', 'ts_p99', 'cli_p50', 'cli_p99', 'p50_x'];
console.log('tool (TypeScript client)'.padEnd(26) + cols.map((c) => c.padStart(9)).join(''));
for (const w of works) {
  for (let i = 0; i < 5; i++) await client.callTool({ name: w.tool, arguments: w.args }); // warm up
  const ms = [];
  for (let i = 0; i < calls; i++) {
    const t0 = process.hrtime.bigint();
    const res = await client.callTool({ name: w.tool, arguments: w.args });
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (res.isError) throw new Error(`${w.name}: ${JSON.stringify(res.content)}`);
  }
  ms.sort((a, b) => a - b);
  const p50 = pct(ms, 0.5);
  const row = [p50, pct(ms, 0.99), w.cli_p50_ms, w.cli_p99_ms].map((x) => x.toFixed(2).padStart(9)).join('');
  console.log(w.name.padEnd(26) + row + (p50 / w.cli_p50_ms).toFixed(2).padStart(9));
}
await client.close();

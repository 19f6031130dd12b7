// Round-trip latency of rowkit mcp's tools from the official TypeScript MCP
// SDK client (the client Claude Code, Codex and Cursor build on), over
// stdio: bench/mcp.sh runs it beside the Go SDK client.
//
// usage: node latency.mjs ROWKIT DIR FILE REPO CALLS
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [bin, dir, file, repo, callsArg] = process.argv.slice(2);
const calls = Number(callsArg ?? 200);
const transport = new StdioClientTransport({ command: bin, args: ['mcp', '--root', dir], cwd: dir, stderr: 'ignore' });
const client = new Client({ name: 'rowkit-bench', version: '1.0.0' });
await client.connect(transport);
await client.listTools(); // the client caches output schemas and validates results against them

const tools = [
  ['read_file', { path: file }],
  ['inspect_file', { path: file }],
  ['search', { pattern: 'func', paths: [file] }],
  ['inspect_repository', { repo_path: repo }],
];
const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))];
console.log(`${'tool (TypeScript client)'.padEnd(26)}${'p50_ms'.padStart(9)}${'p99_ms'.padStart(9)}`);
for (const [name, args] of tools) {
  for (let i = 0; i < 5; i++) await client.callTool({ name, arguments: args }); // warm up
  const ms = [];
  for (let i = 0; i < calls; i++) {
    const t0 = process.hrtime.bigint();
    const res = await client.callTool({ name, arguments: args });
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (res.isError) throw new Error(`${name}: ${JSON.stringify(res.content)}`);
  }
  ms.sort((a, b) => a - b);
  console.log(`${name.padEnd(26)}${pct(ms, 0.5).toFixed(2).padStart(9)}${pct(ms, 0.99).toFixed(2).padStart(9)}`);
}
await client.close();

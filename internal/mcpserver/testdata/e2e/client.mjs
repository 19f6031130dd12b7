// End-to-end client: the official TypeScript MCP SDK launches `rowkit mcp`
// as a subprocess and drives it as Claude Code or Cursor would. The Go test
// (e2e_test.go) writes a spec, runs this script with node and asserts on the
// JSON report it prints; this file only performs the calls.
//
// usage: node client.mjs SPEC.json
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));

async function session(server) {
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    cwd: server.cwd,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (b) => { stderr += b.toString(); });
  const client = new Client({ name: 'rowkit-e2e', version: '1.0.0' });
  await client.connect(transport);
  const out = {
    serverVersion: client.getServerVersion(),
    instructions: client.getInstructions(),
    tools: (await client.listTools()).tools,
    results: [],
  };
  for (const c of server.calls ?? []) {
    try {
      // callTool validates structuredContent against the tool's output
      // schema, error results included.
      out.results.push(await client.callTool({ name: c.name, arguments: c.arguments }));
    } catch (e) {
      out.results.push({ thrown: String(e?.message ?? e) });
    }
  }
  if (server.cancel) {
    const ac = new AbortController();
    const start = Date.now();
    const timer = setTimeout(() => ac.abort('cancelled by the e2e client'), server.cancel.afterMs);
    try {
      const r = await client.callTool({ name: server.cancel.name, arguments: server.cancel.arguments }, undefined, { signal: ac.signal, timeout: 120000 });
      out.cancel = { result: r, ms: Date.now() - start };
    } catch (e) {
      out.cancel = { thrown: String(e?.message ?? e), ms: Date.now() - start };
    }
    clearTimeout(timer);
    // The server must still answer after a cancelled call.
    if (server.after) {
      try {
        out.after = await client.callTool({ name: server.after.name, arguments: server.after.arguments });
      } catch (e) {
        out.after = { thrown: String(e?.message ?? e) };
      }
    }
  }
  await client.close();
  out.stderr = stderr;
  return out;
}

const report = [];
for (const server of spec.servers) {
  report.push(await session(server));
}
process.stdout.write(JSON.stringify(report));

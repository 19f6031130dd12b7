// The floor under read_file's latency from the TypeScript SDK client
// (issue 18 item 4), measured beside rowkit in one run: the client's round
// trip to bench/mcpfloor, a server on the same Go SDK whose tool does no
// work, answering an empty text and then the very text rowkit's read_file
// answers for the bench file (fetched from rowkit first), and read_file
// itself, the three interleaved call by call.
//
// usage: node floor.mjs ROWKIT FLOORBIN DIR FILE TEXTOUT CALLS
import { writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [bin, floorBin, dir, file, textOut, callsArg] = process.argv.slice(2);
const calls = Number(callsArg ?? 200);

async function connect(command, args) {
  const transport = new StdioClientTransport({ command, args, cwd: dir, stderr: 'ignore' });
  const client = new Client({ name: 'rowkit-bench', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  return client;
}

const rowkit = await connect(bin, ['mcp', '--root', dir]);
const first = await rowkit.callTool({ name: 'read_file', arguments: { path: file } });
if (first.isError) throw new Error(JSON.stringify(first.content));
const text = first.content[0].text;
writeFileSync(textOut, text);
const floor = await connect(floorBin, [textOut]);

const works = [
  ['floor: empty text', floor, 'text', { empty: true }],
  [`floor: ${Buffer.byteLength(text)}-byte text`, floor, 'text', {}],
  ['read_file', rowkit, 'read_file', { path: file }],
];
const ms = works.map(() => []);
for (let i = 0; i < 5 + calls; i++) {
  for (let k = 0; k < works.length; k++) {
    const [, client, name, args] = works[k];
    const t0 = process.hrtime.bigint();
    const res = await client.callTool({ name, arguments: args });
    ms[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (res.isError) throw new Error(`${name}: ${JSON.stringify(res.content)}`);
  }
}
const pct = (xs, p) => xs[Math.max(0, Math.min(xs.length - 1, Math.round(p * xs.length) - 1))];
console.log('TypeScript client, interleaved'.padEnd(34) + ['p50_ms', 'p99_ms'].map((c) => c.padStart(9)).join(''));
works.forEach(([label], k) => {
  const xs = ms[k].slice(5).sort((a, b) => a - b); // the first 5 warm up
  console.log(label.padEnd(34) + [pct(xs, 0.5), pct(xs, 0.99)].map((x) => x.toFixed(2).padStart(9)).join(''));
});
await rowkit.close();
await floor.close();

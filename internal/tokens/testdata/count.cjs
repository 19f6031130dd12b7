// Reads one JSON string per line on stdin and prints, one per line, the
// number of o200k_base tokens OpenAI's tiktoken (npm package, Rust core
// built to WebAssembly) gives for it, with no special tokens.
// reference_test.go runs it. The texts are shared out among one worker
// thread per CPU, each with its own encoder, and the counts printed in
// input order.
'use strict';
const os = require('os');
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
const { get_encoding } = require('tiktoken');

if (!isMainThread) {
  const enc = get_encoding('o200k_base');
  const counts = new Int32Array(workerData.length);
  workerData.forEach((line, i) => { counts[i] = enc.encode_ordinary(JSON.parse(line)).length; });
  enc.free();
  parentPort.postMessage(counts, [counts.buffer]);
} else {
  const chunks = [];
  process.stdin.on('data', (c) => chunks.push(c));
  process.stdin.on('end', async () => {
    const text = Buffer.concat(chunks).toString('utf8');
    const lines = text.split('\n');
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    const n = Math.max(1, Math.min(os.availableParallelism(), 4));
    const per = Math.ceil(lines.length / n);
    const parts = await Promise.all(Array.from({ length: n }, (_, k) => new Promise((resolve, reject) => {
      const w = new Worker(__filename, { workerData: lines.slice(k * per, (k + 1) * per) });
      w.once('message', resolve);
      w.once('error', reject);
    })));
    const out = [];
    for (const p of parts) for (const c of p) out.push(c);
    process.stdout.write(out.length ? out.join('\n') + '\n' : '');
  });
}

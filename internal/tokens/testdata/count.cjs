// Reads one JSON string per line on stdin and prints, one per line, the
// number of o200k_base tokens OpenAI's tiktoken (npm package, Rust core
// built to WebAssembly) gives for it, with no special tokens.
// reference_test.go runs it.
'use strict';
const { get_encoding } = require('tiktoken');
const readline = require('readline');

const enc = get_encoding('o200k_base');
const out = [];
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  out.push(enc.encode_ordinary(JSON.parse(line)).length);
  if (out.length >= 65536) {
    process.stdout.write(out.join('\n') + '\n');
    out.length = 0;
  }
});
rl.on('close', () => {
  if (out.length) process.stdout.write(out.join('\n') + '\n');
  enc.free();
});

#!/usr/bin/env node
'use strict';
// Reads a fake model request log (JSON Lines, one request a line).
//
//   node log.js LOG                 one line a request: seq api op turn answer
//   node log.js LOG results         every tool result the model was given,
//                                   first request carrying each: seq id text
//   node log.js LOG result CALL_ID  the text of the result of one scripted call
//                                   (exit 1 if no request carried it)
// As a module: read(file) -> entries, resultOf(entries, callId) -> text or null.
const fs = require('node:fs');

function read(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

// The first tool result for callId that reached the model, or null.
function resultOf(entries, callId) {
  for (const e of entries) {
    const r = (e.toolResults ?? []).find((x) => x.id === callId);
    if (r) return r.text;
  }
  return null;
}

function main([file, cmd, arg]) {
  if (!file) { console.error('usage: log.js LOG [results | result CALL_ID]'); return 2; }
  const entries = read(file);
  if (!cmd) {
    for (const e of entries) {
      const a = e.answer ? (e.answer.calls.map((c) => `${c.name}#${c.id}`).join(',') || JSON.stringify(e.answer.text)) : '-';
      console.log(`${e.seq}\t${e.api ?? '?'}\t${e.op ?? e.path}\t${e.turn ?? '-'}\t${a}`);
    }
    return 0;
  }
  if (cmd === 'results') {
    const seen = new Set();
    for (const e of entries) {
      for (const r of e.toolResults ?? []) {
        if (seen.has(r.id)) continue;
        seen.add(r.id);
        console.log(`${e.seq}\t${r.id}\t${JSON.stringify(r.text)}`);
      }
    }
    return 0;
  }
  if (cmd === 'result') {
    const text = resultOf(entries, arg);
    if (text === null) return 1;
    console.log(text);
    return 0;
  }
  console.error(`log.js: unknown command ${cmd}`);
  return 2;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
module.exports = { read, resultOf };

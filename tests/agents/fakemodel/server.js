#!/usr/bin/env node
'use strict';
// A scripted fake model server for driving coding-agent CLIs offline.
//
//   node server.js --script turns.json --log requests.jsonl [--port 0] [--port-file F]
//
// Listens on 127.0.0.1 and prints the port on the first line of stdout. Speaks
// Anthropic Messages, OpenAI Responses, Chat Completions and Gemini (see the
// module of each). Every request is appended to the log as one JSON line:
//   { seq, ms, method, path, api, op, turn, offered, answer, toolResults, headers, body }
// Control endpoints:
//   GET  /_fake/log      the log so far (JSON Lines)
//   GET  /_fake/state    { turnsUsed, turnsTotal, requests }
//   POST /_fake/script   replace the script (body: a script) and start it over
//   POST /_fake/quit     stop the server
const http = require('node:http');
const fs = require('node:fs');
const zlib = require('node:zlib');
const { Script } = require('./script');
const { sendJson } = require('./sse');

const WIRES = ['models', 'anthropic', 'responses', 'chat', 'gemini'].map((m) => require(`./${m}`));

function parseArgs(argv) {
  const o = { port: 0 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i], v = argv[i + 1];
    if (k === '--script') { o.script = v; i++; } else if (k === '--log') { o.log = v; i++; } else if (k === '--port') { o.port = Number(v); i++; } else if (k === '--port-file') { o.portFile = v; i++; } else {
      console.error(`fakemodel: unknown argument ${k}`);
      process.exit(2);
    }
  }
  if (!o.log) { console.error('fakemodel: --log FILE is required'); process.exit(2); }
  return o;
}

const opts = parseArgs(process.argv.slice(2));
let script = Script.load(opts.script);
let seq = 0;
const started = Date.now();
fs.writeFileSync(opts.log, '');

function record(entry) {
  fs.appendFileSync(opts.log, JSON.stringify(entry) + '\n');
}

function control(req, res, path, raw) {
  if (req.method === 'GET' && path === '/_fake/log') {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    return res.end(fs.readFileSync(opts.log));
  }
  if (req.method === 'GET' && path === '/_fake/state') return sendJson(res, 200, { ...script.state(), requests: seq });
  if (req.method === 'POST' && path === '/_fake/script') {
    script = new Script(JSON.parse(raw || '{}'));
    return sendJson(res, 200, script.state());
  }
  if (req.method === 'POST' && path === '/_fake/quit') {
    sendJson(res, 200, { bye: true });
    server.close(() => process.exit(0));
    return server.closeAllConnections();
  }
  return sendJson(res, 404, { error: 'no such control endpoint' });
}

function handle(req, res, raw) {
  const url = new URL(req.url, 'http://127.0.0.1');
  const path = url.pathname.replace(/\/{2,}/g, '/');
  if (path.startsWith('/_fake/')) return control(req, res, path, raw);
  let body = null;
  try { body = raw ? JSON.parse(raw) : null; } catch { body = raw; }
  const n = ++seq;
  const entry = { seq: n, ms: Date.now() - started, method: req.method, path: req.url, api: null, op: null,
    turn: null, offered: null, answer: null, toolResults: [], headers: req.headers, body };
  for (const wire of WIRES) {
    const op = wire.route(req.method, path);
    if (!op) continue;
    const offered = wire.offered(op, body);
    const generation = offered !== null;
    const took = generation ? script.take(offered.length > 0) : { turn: null, answer: null };
    const turn = took.turn;
    // Call ids are call_<seq>_<i>, the same on every wire, so a test can find
    // the result of a call it scripted in a later request.
    const answer = took.answer && { ...took.answer,
      calls: took.answer.calls.map((c, i) => ({ id: `call_${n}_${i}`, ...c })) };
    Object.assign(entry, { api: wire.name, op, turn, offered, answer, toolResults: wire.toolResults(body) });
    for (const c of answer?.calls ?? []) {
      if (!offered.includes(c.name)) console.error(`fakemodel: #${n} calls ${c.name}, not among the tools offered`);
    }
    record(entry);
    try {
      return wire.respond(op, { res, body, answer, seq: n, path, models: script.models });
    } catch (e) {
      console.error(`fakemodel: #${n} ${e.stack}`);
      return sendJson(res, 500, { error: { message: String(e) } });
    }
  }
  record(entry);
  console.error(`fakemodel: #${n} no route for ${req.method} ${req.url}`);
  sendJson(res, 404, { error: { type: 'not_found_error', message: `fake model: no route for ${req.method} ${path}` } });
}

// Request bodies may come compressed.
function decode(req, buf) {
  const enc = (req.headers['content-encoding'] || '').toLowerCase();
  if (enc === 'gzip') return zlib.gunzipSync(buf);
  if (enc === 'deflate') return zlib.inflateSync(buf);
  if (enc === 'br') return zlib.brotliDecompressSync(buf);
  if (enc === 'zstd' && zlib.zstdDecompressSync) return zlib.zstdDecompressSync(buf);
  return buf;
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => handle(req, res, decode(req, Buffer.concat(chunks)).toString('utf8')));
});

server.listen(opts.port, '127.0.0.1', () => {
  const { port } = server.address();
  if (opts.portFile) fs.writeFileSync(opts.portFile, `${port}\n`);
  process.stdout.write(`${port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));

// `leasehold guard mcp` in front of the official filesystem server, launched over stdio by two
// official-SDK clients (as Claude Code or any MCP client launches a server), against one
// Leasehold: another agent's lease refuses a write naming the holder; with both agents live an
// unlocked write is refused as strict; a lock taken through the guard protects the write; a
// symlinked path names the same lease; a raw 2025-03-26 batch settles its lock first; a stopped
// service gives isError results, not hangs.
//
// Run: LEASEHOLD_BINARY=build/app/leasehold node --test tests/mcp/guard.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, symlinkSync, rmSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { hasParked, noneParked, startLeasehold, untilQueue } from './leasehold.mjs';

const KEYS = {
  keys: [
    { key: 'key-agent-a-0123456789', did: 'did:agent:a', role: 'agent' },
    { key: 'key-agent-b-0123456789', did: 'did:agent:b', role: 'agent' },
    { key: 'key-agent-c-0123456789', did: 'did:agent:c', role: 'agent' },
    { key: 'key-agent-d-0123456789', did: 'did:agent:d', role: 'agent' },
  ],
};
const require = createRequire(import.meta.url);
const FILESYSTEM = join(dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
                        'dist', 'index.js');

let server;
let workspace;
let a;
let b;

function guardArgs(key, extra = []) {
  return ['guard', 'mcp', '--url', server.url, '--key', key, '--root', workspace, ...extra,
          '--', process.execPath, FILESYSTEM, workspace];
}

async function connect(key, name) {
  const transport = new StdioClientTransport({
    command: process.env.LEASEHOLD_BINARY, args: guardArgs(key), stderr: 'pipe',
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const call = (agent, name, args = {}) => agent.client.callTool({ name, arguments: args });
const text = (result) => result.content.map((c) => c.text).join('\n');

before(async () => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'leasehold-guard-')));
  mkdirSync(join(workspace, 'src'));
  writeFileSync(join(workspace, 'src', 'a.txt'), 'original\n');
  symlinkSync(join(workspace, 'src'), join(workspace, 'link'));
  server = await startLeasehold({ keys: KEYS });
  a = await connect('key-agent-a-0123456789', 'agent-a');
  b = await connect('key-agent-b-0123456789', 'agent-b');
  // As real clients do: they list the tools first, and then check results against the tools'
  // output schemas.
  await b.client.listTools();
});

after(async () => {
  for (const agent of [a, b]) await agent?.client.close().catch(() => {});
  if (server) await server.stop();
  rmSync(workspace, { recursive: true, force: true });
});

test('the catalogue is the inner server\'s plus Leasehold\'s lock tools', async () => {
  const { tools } = await a.client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of ['write_file', 'edit_file', 'read_text_file', 'lock_acquire', 'lock_release', 'lock_status'])
    assert.ok(names.includes(name), `${name} in ${names}`);
  assert.equal(names.filter((n) => n === 'lock_acquire').length, 1);
  // The service's own description, not a copy.
  assert.match(tools.find((t) => t.name === 'lock_acquire').description, /wait/);
});

test('another agent\'s lease refuses the write, naming the holder; a lock protects it', async () => {
  const locked = await call(a, 'lock_acquire', { paths: ['src/a.txt'] });
  assert.ok(!locked.isError, text(locked));
  const refused = await call(b, 'write_file', { path: join(workspace, 'src', 'a.txt'), content: 'b was here\n' });
  assert.equal(refused.isError, true);
  assert.match(text(refused), /^Your write_file changed nothing: fs:src\/a\.txt is held by did:agent:a/);
  assert.equal(refused._meta.leasehold.holder, 'did:agent:a');
  assert.equal(refused._meta.leasehold.reason, 'lease_held');
  assert.equal(readFileSync(join(workspace, 'src', 'a.txt'), 'utf8'), 'original\n');
  // Through a symlinked folder the file has the same name.
  const viaLink = await call(b, 'edit_file', {
    path: join(workspace, 'link', 'a.txt'), edits: [{ oldText: 'original', newText: 'b' }],
  });
  assert.equal(viaLink.isError, true);
  assert.match(text(viaLink), /held by did:agent:a/);
  // The holder writes.
  const mine = await call(a, 'write_file', { path: 'src/a.txt', content: 'a was here\n' });
  assert.ok(!mine.isError, text(mine));
  assert.equal(readFileSync(join(workspace, 'src', 'a.txt'), 'utf8'), 'a was here\n');

  // Released: with both agents live, b must lock first (strict)...
  assert.ok(!(await call(a, 'lock_release', {})).isError);
  const strict = await call(b, 'write_file', { path: 'src/a.txt', content: 'b\n' });
  assert.equal(strict.isError, true);
  assert.match(text(strict), /^another agent is live; lock_acquire first: call lock_acquire with paths \["fs:src\/a\.txt"\]/);
  assert.equal(strict._meta.leasehold.reason, 'lock_required');
  assert.equal(strict.structuredContent, undefined); // the inner tool's output schema is not ours
  // ...and then succeeds.
  assert.ok(!(await call(b, 'lock_acquire', { paths: [join(workspace, 'src', 'a.txt')] })).isError);
  const done = await call(b, 'write_file', { path: 'src/a.txt', content: 'b\n' });
  assert.ok(!done.isError, text(done));
  assert.equal(readFileSync(join(workspace, 'src', 'a.txt'), 'utf8'), 'b\n');
  const status = await call(b, 'lock_status');
  assert.ok(status.structuredContent.liveAgents >= 2);
  assert.ok(!(await call(b, 'lock_release', {})).isError);
});

// The wait queue on `resource`, as the REST surface shows it.
const waiters = (resource) => async () => {
  const response = await fetch(`${server.url}/api/v1/acp/coordination/wait?resource=${resource}`,
                               { headers: { Authorization: 'Bearer key-agent-a-0123456789' } });
  return (await response.json()).waiters;
};

test('a client that gives up on a parked lock_acquire cancels the wait; nothing is taken', async () => {
  assert.ok(!(await call(a, 'lock_acquire', { paths: ['src/wait.txt'] })).isError);
  const abort = new AbortController();
  const waiting = b.client.callTool({ name: 'lock_acquire', arguments: { paths: ['src/wait.txt'], wait: 60 } },
                                    undefined, { signal: abort.signal });
  await untilQueue(waiters('fs:src/wait.txt'), hasParked('did:agent:b'), 'b parked behind a');
  abort.abort('the user pressed stop');
  await assert.rejects(waiting);
  await untilQueue(waiters('fs:src/wait.txt'), noneParked, 'no wait left after the cancel');
  assert.ok(!(await call(a, 'lock_release', {})).isError);
  const status = await call(b, 'lock_status');
  assert.deepEqual(status.structuredContent.held, []);
  assert.deepEqual(status.structuredContent.waiting, []);
});

test('a raw 2025-03-26 batch settles its lock call first, then the edit it protects', async () => {
  const child = spawn(process.env.LEASEHOLD_BINARY, guardArgs('key-agent-c-0123456789'),
                      { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const answers = [];
  let wake;
  lines.on('line', (line) => { answers.push(JSON.parse(line)); wake?.(); });
  const next = async () => {
    while (answers.length === 0) await new Promise((resolve) => { wake = resolve; });
    return answers.shift();
  };
  const send = (m) => child.stdin.write(JSON.stringify(m) + '\n');
  send({ jsonrpc: '2.0', id: 1, method: 'initialize',
         params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  assert.equal((await next()).id, 1);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // The edit comes first in the batch; the lock call still settles before it is judged.
  send([
    { jsonrpc: '2.0', id: 'edit', method: 'tools/call',
      params: { name: 'write_file', arguments: { path: 'src/batch.txt', content: 'c\n' } } },
    { jsonrpc: '2.0', id: 'lock', method: 'tools/call',
      params: { name: 'lock_acquire', arguments: { paths: ['src/batch.txt'] } } },
  ]);
  const batch = await next();
  assert.ok(Array.isArray(batch), JSON.stringify(batch));
  assert.deepEqual(batch.map((r) => r.id), ['edit', 'lock']); // the caller's order
  assert.ok(!batch[1].result.isError, JSON.stringify(batch[1]));
  assert.ok(!batch[0].result.isError, JSON.stringify(batch[0]));
  assert.equal(readFileSync(join(workspace, 'src', 'batch.txt'), 'utf8'), 'c\n');
  // A malformed call is one error in its place; the rest are answered.
  send([{ jsonrpc: '2.0', id: 7, method: 'tools/call', params: {} },
        { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'lock_release', arguments: {} } }]);
  const mixed = await next();
  assert.equal(mixed[0].error.code, -32602);
  assert.ok(!mixed[1].result.isError, JSON.stringify(mixed[1]));
  child.stdin.end();
  assert.equal(await new Promise((resolve) => child.on('exit', resolve)), 0);
});

test('an agent that only reads through the guard is live, so the others stay strict', async () => {
  const transport = new StdioClientTransport({
    command: process.env.LEASEHOLD_BINARY,
    args: guardArgs('key-agent-d-0123456789', ['--presence-every', '0']),
    stderr: 'pipe',
  });
  // d is new to the service: only the guard's word makes it live.
  const reader = new Client({ name: 'agent-d', version: '1.0.0' });
  await reader.connect(transport);
  const read = await reader.callTool({ name: 'read_text_file', arguments: { path: join(workspace, 'src', 'a.txt') } });
  assert.ok(!read.isError);
  // The guard's word travels beside the calls, not inside them: ask until it has arrived.
  let d;
  for (let attempt = 0; attempt < 500 && !d; ++attempt) {
    const status = await (await fetch(`${server.url}/api/v1/acp/coordination/status`,
                                      { headers: { Authorization: 'Bearer key-agent-a-0123456789' } })).json();
    d = status.agents.find((agent) => agent.actorDid === 'did:agent:d');
  }
  assert.ok(d, 'd is known to the service');
  assert.deepEqual(d.via, ['guard']);
  await reader.close();
});

test('an inner server that dies leaves isError results, not hangs', async () => {
  const transport = new StdioClientTransport({
    command: process.env.LEASEHOLD_BINARY,
    args: ['guard', 'mcp', '--url', server.url, '--key', 'key-agent-c-0123456789', '--root', workspace,
           '--', process.execPath, '-e', `
             const rl = require('readline').createInterface({ input: process.stdin });
             rl.on('line', (line) => {
               const m = JSON.parse(line);
               if (m.method === 'initialize')
                 console.log(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {
                   protocolVersion: m.params.protocolVersion, capabilities: { tools: {} },
                   serverInfo: { name: 'dies', version: '1' } } }));
               if (m.method === 'tools/call') process.exit(3);
             });`],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'agent-c', version: '1.0.0' });
  await client.connect(transport);
  const first = await client.callTool({ name: 'read_anything', arguments: {} });
  assert.equal(first.isError, true);
  assert.match(first.content[0].text, /exited with status 3/);
  const second = await client.callTool({ name: 'read_anything', arguments: {} });
  assert.equal(second.isError, true);
  await client.close();
});

test('an inner server over Streamable HTTP: its own lock tools give way to the central ones', async () => {
  // Another Leasehold, with a workspace, is a Streamable HTTP MCP server with fs_* tools.
  const inner = await startLeasehold({ open: true, extraArgs: ['--in-memory', '--workspace', workspace] });
  try {
    const transport = new StdioClientTransport({
      command: process.env.LEASEHOLD_BINARY,
      args: ['guard', 'mcp', '--url', server.url, '--key', 'key-agent-c-0123456789', '--root', workspace,
             '--enforced-tools', 'fs_write,fs_edit', '--inner-url', inner.url + '/mcp',
             '--inner-header', 'X-Agent-Id: did:agent:inner-c'],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'agent-c', version: '1.0.0' });
    await client.connect(transport);
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('fs_write'), names.join());
    assert.equal(names.filter((n) => n === 'lock_acquire').length, 1);
    assert.ok(!(await call(a, 'lock_acquire', { paths: ['src/h.txt'] })).isError);
    const refused = await client.callTool({ name: 'fs_write', arguments: { path: 'src/h.txt', content: 'c\n' } });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /^Your fs_write changed nothing: fs:src\/h\.txt is held by did:agent:a/);
    assert.ok(!(await call(a, 'lock_release', {})).isError);
    // The lock call goes to the central service, not to the inner one.
    assert.ok(!(await client.callTool({ name: 'lock_acquire', arguments: { paths: ['src/h.txt'] } })).isError);
    const written = await client.callTool({ name: 'fs_write', arguments: { path: 'src/h.txt', content: 'c\n' } });
    assert.ok(!written.isError, text(written));
    assert.equal(readFileSync(join(workspace, 'src', 'h.txt'), 'utf8'), 'c\n');
    const refusedForA = await call(a, 'write_file', { path: 'src/h.txt', content: 'a\n' });
    assert.match(text(refusedForA), /held by did:agent:c/);
    assert.ok(!(await client.callTool({ name: 'lock_release', arguments: {} })).isError);
    await client.close();
  } finally {
    await inner.stop();
  }
});

test('with the service stopped, calls are isError results, not hangs', async () => {
  await server.stop();
  server = null;
  const write = await call(b, 'write_file', { path: 'src/a.txt', content: 'lost?\n' });
  assert.equal(write.isError, true);
  assert.match(text(write), /could not be asked/);
  assert.equal(readFileSync(join(workspace, 'src', 'a.txt'), 'utf8'), 'b\n');
  const lock = await call(b, 'lock_acquire', { paths: ['src/a.txt'] });
  assert.equal(lock.isError, true);
  assert.match(text(lock), /Nothing was taken/);
  // Calls that need no lease still reach the inner server.
  const read = await call(b, 'read_text_file', { path: join(workspace, 'src', 'a.txt') });
  assert.ok(!read.isError);
});

// Two agents coordinate through a real Leasehold process with the official MCP SDK client
// (Streamable HTTP, bearer keys): acquire, a refusal naming the holder, a bounded wait ended
// by a release, cancellation of a wait, a bare release and lock_status.
//
// Run: LEASEHOLD_BINARY=build/app/leasehold node --test tests/mcp/two_agents.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { hasParked, noneParked, startLeasehold, untilQueue } from './leasehold.mjs';

const KEYS = {
  keys: [
    { key: 'key-agent-a-0123456789', did: 'did:agent:a', role: 'agent' },
    { key: 'key-agent-b-0123456789', did: 'did:agent:b', role: 'agent' },
    { key: 'key-admin-0123456789', did: 'did:op:admin', role: 'admin' },
  ],
};

let server;
let a;
let b;

async function connect(key, name) {
  const transport = new StreamableHTTPClientTransport(new URL(server.url + '/mcp'), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const call = (agent, name, args = {}, options) =>
  agent.client.callTool({ name, arguments: args }, undefined, options);

const waiters = (resource) => async () =>
  (await call(a, 'coordination_wait', { resource })).structuredContent.waiters;
const parked = (did, resource) =>
  untilQueue(waiters(resource), hasParked(did), `${did} parked on ${resource}`);

before(async () => {
  server = await startLeasehold({ keys: KEYS });
  a = await connect('key-agent-a-0123456789', 'agent-a');
  b = await connect('key-agent-b-0123456789', 'agent-b');
});

after(async () => {
  for (const agent of [a, b]) await agent?.transport.terminateSession().catch(() => {});
  for (const agent of [a, b]) await agent?.client.close().catch(() => {});
  if (server) assert.equal(await server.stop(), 0, `leasehold exited cleanly: ${server.stderr()}`);
});

test('the server names itself and publishes the lock tools with schemas', async () => {
  assert.equal(a.client.getServerVersion().name, 'leasehold');
  assert.match(a.client.getInstructions(), /lock_acquire/);
  const { tools } = await a.client.listTools();
  const names = tools.map((t) => t.name);
  for (const name of ['lock_acquire', 'lock_release', 'lock_status', 'coordination_lease_acquire',
    'coordination_lease_release', 'coordination_wait'])
    assert.ok(names.includes(name), `${name} is published`);
  for (const tool of tools) {
    assert.match(tool.name, /^[A-Za-z0-9_-]{1,64}$/);
    assert.equal(tool.inputSchema.type, 'object');
    assert.equal(tool.outputSchema.type, 'object');
    assert.ok(tool.description.length > 80, `${tool.name} explains itself to a model`);
  }
});

test('acquire, refusal naming the holder, wait ended by a release', async () => {
  const granted = await call(a, 'lock_acquire', { paths: ['src/app.cpp'], wait: 0 });
  assert.equal(granted.isError, undefined);
  assert.equal(granted.structuredContent.ok, true);
  assert.equal(granted.structuredContent.leases[0].holder, 'did:agent:a');
  assert.equal(granted.structuredContent.leases[0].resource, 'fs:src/app.cpp');
  assert.deepEqual(JSON.parse(granted.content[0].text), granted.structuredContent);

  const refused = await call(b, 'lock_acquire', { paths: ['src/app.cpp'], wait: 0 });
  assert.equal(refused.isError, true);
  assert.equal(refused.structuredContent.reason, 'lease_held');
  assert.equal(refused.structuredContent.holder, 'did:agent:a');
  assert.match(refused.content[0].text, /held by did:agent:a \(for \d+ m?s, expires in \d+ (s|min)/);
  assert.match(refused.content[0].text, /work on something else/);

  const waiting = call(b, 'lock_acquire', { paths: ['src/app.cpp'], wait: 30 });
  await parked('did:agent:b', 'src/app.cpp');
  const released = await call(a, 'lock_release', { paths: ['src/app.cpp'] });
  assert.equal(released.structuredContent.released.length, 1);
  const after = await waiting;
  assert.equal(after.isError, undefined);
  assert.equal(after.structuredContent.leases[0].holder, 'did:agent:b');
  assert.ok(after.structuredContent.waitedMs >= 0);
});

test('lock_status shows what I hold; a bare release gives everything back', async () => {
  const status = await call(b, 'lock_status');
  assert.equal(status.structuredContent.actorDid, 'did:agent:b');
  assert.deepEqual(status.structuredContent.held.map((l) => l.resource), ['fs:src/app.cpp']);
  assert.ok(status.structuredContent.held[0].expiresInMs > 0);
  assert.ok(status.structuredContent.liveAgents >= 2);

  const bare = await call(b, 'lock_release');
  assert.equal(bare.structuredContent.released.length, 1);
  const empty = await call(b, 'lock_status');
  assert.deepEqual(empty.structuredContent.held, []);
});

test('a cancelled wait takes nothing', async () => {
  await call(a, 'lock_acquire', { paths: ['docs'], wait: 0 });
  const abort = new AbortController();
  const waiting = call(b, 'lock_acquire', { paths: ['docs/guide.md'], wait: 60 },
    { signal: abort.signal });
  await parked('did:agent:b', 'docs/guide.md');
  abort.abort('the user stopped the run');
  await assert.rejects(waiting);
  await untilQueue(waiters('docs'), noneParked, 'no wait left on docs');
  await call(a, 'lock_release');
  const status = await call(b, 'lock_status');
  assert.deepEqual(status.structuredContent.held, [], 'the cancelled wait was not granted later');
});

test('the coordination tools and their dotted aliases', async () => {
  const got = await call(a, 'coordination.lease.acquire',
    { resource: 'lock:deploy/production', ttlMs: 5000 });
  assert.equal(got.structuredContent.lease.resource, 'lock:deploy/production');
  const refused = await call(b, 'coordination_lease_acquire', { resource: 'lock:deploy' });
  assert.equal(refused.isError, true);
  assert.equal(refused.structuredContent.holder, 'did:agent:a');
  assert.ok(refused.structuredContent.stampede.waitMs > 0);
  const mismatch = await call(b, 'coordination_lease_release',
    { resource: 'lock:deploy/production', actorDid: 'did:agent:a' });
  assert.equal(mismatch.structuredContent.reason, 'actor_mismatch');
  const done = await call(a, 'coordination.lease.release',
    { resource: 'lock:deploy/production', leaseId: got.structuredContent.lease.leaseId });
  assert.equal(done.structuredContent.released[0].leaseId, got.structuredContent.lease.leaseId);
});

test('resources and the coordinate prompt', async () => {
  const { resources } = await a.client.listResources();
  assert.deepEqual(resources.map((r) => r.uri).sort(), ['leasehold://queue', 'leasehold://status']);
  const status = await a.client.readResource({ uri: 'leasehold://status' });
  assert.ok(Array.isArray(JSON.parse(status.contents[0].text).leases));
  const prompt = await a.client.getPrompt({ name: 'coordinate' });
  assert.match(prompt.messages[0].content.text, /lock_release/);
});

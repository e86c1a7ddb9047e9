// Both generations of the official TypeScript SDK against one Leasehold: two agents on MCP
// 2026-07-28 (@modelcontextprotocol/client 2.x, negotiating with server/discover) and one on
// 2025-11-25 (@modelcontextprotocol/sdk 1.x, initialize and a session) contend for one file.
// Refusal, a parked wait that outlasts the client's own request timeout by progress, wake-up on
// release and cancellation behave the same in both eras; every tool schema is JSON Schema
// 2020-12 and every result matches its output schema.
//
// Run: LEASEHOLD_BINARY=build/app/leasehold node --test tests/mcp/eras.test.mjs (Node >= 20)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport }
  from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport }
  from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import Ajv2020 from 'ajv/dist/2020.js';

import { hasParked, noneParked, startLeasehold, untilQueue } from './leasehold.mjs';

const KEYS = {
  keys: [
    { key: 'key-agent-m1-0123456789', did: 'did:agent:m1', role: 'agent' },
    { key: 'key-agent-m2-0123456789', did: 'did:agent:m2', role: 'agent' },
    { key: 'key-agent-l1-0123456789', did: 'did:agent:l1', role: 'agent' },
  ],
};
const FILE = 'src/shared.ts';
const PROGRESS_MS = 300; // the server's progress interval for this test (mcpProgressMs)

let server;
const agents = {};

async function connectModern(key, name) {
  const transport = new ModernTransport(new URL(server.url + '/mcp'), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new ModernClient({ name, version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } });
  await client.connect(transport);
  return { client, transport, era: 'modern' };
}

async function connectLegacy(key, name) {
  const transport = new LegacyTransport(new URL(server.url + '/mcp'), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new LegacyClient({ name, version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, era: 'legacy' };
}

// The 2.x client takes the request options second; the 1.x one third (after a result schema).
const call = (agent, name, args = {}, options) => (agent.era === 'modern'
  ? agent.client.callTool({ name, arguments: args }, options)
  : agent.client.callTool({ name, arguments: args }, undefined, options));

const waiters = (resource) => async () =>
  (await call(agents.m1, 'coordination_wait', { resource })).structuredContent.waiters;
const parked = (did, resource) =>
  untilQueue(waiters(resource), hasParked(did), `${did} parked on ${resource}`);
const nobodyParked = (resource) =>
  untilQueue(waiters(resource), noneParked, `no wait left on ${resource}`);

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-eras-'));
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ mcpProgressMs: PROGRESS_MS }));
  server = await startLeasehold({ keys: KEYS, extraArgs: ['--config', config] });
  agents.m1 = await connectModern('key-agent-m1-0123456789', 'modern-1');
  agents.m2 = await connectModern('key-agent-m2-0123456789', 'modern-2');
  agents.l1 = await connectLegacy('key-agent-l1-0123456789', 'legacy-1');
});

after(async () => {
  await agents.l1?.transport.terminateSession().catch(() => {});
  for (const agent of Object.values(agents)) await agent.client.close().catch(() => {});
  if (server) assert.equal(await server.stop(), 0, `leasehold exited cleanly: ${server.stderr()}`);
});

test('a 2026-07-28 client connects without falling back; a 2025 client keeps its session', () => {
  for (const name of ['m1', 'm2']) {
    assert.equal(agents[name].client.getProtocolEra(), 'modern');
    assert.equal(agents[name].client.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.equal(agents[name].client.getServerVersion()?.name, 'leasehold');
    assert.deepEqual(agents[name].client.getDiscoverResult().supportedVersions,
      ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']);
  }
  assert.equal(agents.l1.client.getServerVersion().name, 'leasehold');
  assert.ok(agents.l1.transport.sessionId, 'the 2025 client has a session');
  assert.equal(agents.l1.transport.protocolVersion, '2025-11-25');
});

test('one catalogue in both eras, in JSON Schema 2020-12, caching hints on the modern one', async () => {
  const modern = await agents.m1.client.listTools();
  const legacy = await agents.l1.client.listTools();
  assert.deepEqual(modern.tools.map((t) => t.name), legacy.tools.map((t) => t.name));
  assert.equal(modern.ttlMs, 300000);
  assert.equal(modern.cacheScope, 'public');
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addKeyword({ keyword: 'x-mcp-header', schemaType: 'string' }); // 2026: Mcp-Param-* headers
  for (const tool of modern.tools) {
    assert.ok(ajv.validateSchema(tool.inputSchema), `${tool.name} input: ${ajv.errorsText()}`);
    assert.ok(ajv.validateSchema(tool.outputSchema), `${tool.name} output: ${ajv.errorsText()}`);
  }
  const output = Object.fromEntries(modern.tools.map((t) => [t.name, ajv.compile(t.outputSchema)]));
  const status = await call(agents.m1, 'lock_status');
  assert.ok(output.lock_status(status.structuredContent), ajv.errorsText(output.lock_status.errors));
});

// The same contention, played with each era as the waiter: the holder is modern (m1).
for (const waiterName of ['m2', 'l1']) {
  test(`refusal, a wait past the client's own timeout, wake-up on release (${waiterName})`,
    async () => {
      const holder = agents.m1;
      const waiter = agents[waiterName];
      const did = `did:agent:${waiterName}`;
      const granted = await call(holder, 'lock_acquire', { paths: [FILE], wait: 0 });
      assert.equal(granted.isError, undefined);

      const refused = await call(waiter, 'lock_acquire', { paths: [FILE], wait: 0 });
      assert.equal(refused.isError, true);
      assert.equal(refused.structuredContent.reason, 'lease_held');
      assert.equal(refused.structuredContent.holder, 'did:agent:m1');
      assert.match(refused.content[0].text, /did:agent:m1/);

      // The waiter's requests time out after TIMEOUT_MS unless progress resets the clock; it
      // waits longer than that, hearing every PROGRESS_MS whom it waits for. The timeout is
      // several intervals so that a loaded machine's late notification does not end the call.
      const TIMEOUT_MS = 2000;
      const enough = Math.ceil(TIMEOUT_MS / PROGRESS_MS) + 2; // spans more than the timeout
      const heard = [];
      let enoughHeard;
      const all = new Promise((resolve) => { enoughHeard = resolve; });
      const waiting = call(waiter, 'lock_acquire', { paths: [FILE], wait: 30 }, {
        timeout: TIMEOUT_MS,
        resetTimeoutOnProgress: true,
        onprogress: (p) => { if (heard.push(p) === enough) enoughHeard(); },
      });
      await parked(did, `fs:${FILE}`);
      // `enough` notifications take `enough - 1` intervals: beyond the timeout, so the call is
      // still waiting only because progress reset it. A call that timed out ends the race.
      await Promise.race([all, waiting]);
      assert.ok(heard.length >= enough, `heard ${heard.length} progress notifications`);
      assert.match(heard[0].message, /held by did:agent:m1/);
      assert.equal(heard[0].total, 30000);
      for (let i = 1; i < heard.length; ++i) assert.ok(heard[i].progress > heard[i - 1].progress);
      assert.ok(heard[heard.length - 1].progress > TIMEOUT_MS,
        `the last notification came ${heard[heard.length - 1].progress} ms into the wait`);

      await call(holder, 'lock_release', { paths: [FILE] });
      const woken = await waiting;
      assert.equal(woken.isError, undefined, JSON.stringify(woken));
      assert.equal(woken.structuredContent.leases[0].holder, did);
      assert.ok(woken.structuredContent.waitedMs > TIMEOUT_MS);
      await call(waiter, 'lock_release');
    });

  test(`cancelling a parked wait takes nothing (${waiterName})`, async () => {
    const holder = agents.m1;
    const waiter = agents[waiterName];
    await call(holder, 'lock_acquire', { paths: [FILE], wait: 0 });
    const controller = new AbortController();
    const waiting = call(waiter, 'lock_acquire', { paths: [FILE], wait: 30 },
      { signal: controller.signal });
    await parked(`did:agent:${waiterName}`, `fs:${FILE}`);
    controller.abort('the user stopped');
    await assert.rejects(waiting);
    await nobodyParked(`fs:${FILE}`);
    await call(holder, 'lock_release');
    const status = await call(waiter, 'lock_status');
    assert.deepEqual(status.structuredContent.held, []);
  });
}

test('refusals read the same in both eras', async () => {
  await call(agents.m1, 'lock_acquire', { paths: ['docs'], wait: 0 });
  const modern = await call(agents.m2, 'lock_acquire', { paths: ['docs/a.md'], wait: 0 });
  const legacy = await call(agents.l1, 'lock_acquire', { paths: ['docs/a.md'], wait: 0 });
  // The same fields with the same values, except the times, which moved on between the two,
  // and the stampede count, which counts the first refusal when the second is made.
  const shape = (r) => ({ ...r.structuredContent, message: undefined, heldForMs: undefined,
    expiresInMs: undefined, retryAfterSeconds: undefined, stampede: undefined });
  assert.deepEqual(Object.keys(modern.structuredContent).sort(),
    Object.keys(legacy.structuredContent).sort());
  assert.deepEqual(shape(modern), shape(legacy));
  assert.equal(modern.structuredContent.holder, 'did:agent:m1');
  assert.equal(modern.content[0].text.replace(/\d+/g, 'N'),
    legacy.content[0].text.replace(/\d+/g, 'N'));
  await call(agents.m1, 'lock_release');
});

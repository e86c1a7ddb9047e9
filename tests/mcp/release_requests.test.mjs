// A release request reaches its holder through the official MCP SDK client: a refused agent asks
// over REST, and the holder's next tool call brings a `notifications/message` (data.type
// "release_requested") that the client's notification handler receives, then lock_status lists
// it; the holder declines it over REST, and the ledger records both.
//
// Run: LEASEHOLD_BINARY=build/app/leasehold node --test tests/mcp/release_requests.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { startLeasehold } from './leasehold.mjs';

const KEY_A = 'key-agent-a-0123456789';
const KEY_B = 'key-agent-b-0123456789';
const KEYS = {
  keys: [
    { key: KEY_A, did: 'did:agent:a', role: 'agent' },
    { key: KEY_B, did: 'did:agent:b', role: 'agent' },
  ],
};
const BASE = '/api/v1/acp/coordination';

let server;
let a;
const notices = [];

async function rest(key, method, route, body) {
  const response = await fetch(server.url + BASE + route, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

before(async () => {
  server = await startLeasehold({ keys: KEYS });
  const transport = new StreamableHTTPClientTransport(new URL(server.url + '/mcp'), {
    requestInit: { headers: { Authorization: `Bearer ${KEY_A}` } },
  });
  const client = new Client({ name: 'holder', version: '1.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => notices.push(n.params));
  await client.connect(transport);
  a = { client, transport };
});

after(async () => {
  await a?.transport.terminateSession().catch(() => {});
  await a?.client.close().catch(() => {});
  if (server) assert.equal(await server.stop(), 0, `leasehold exited cleanly: ${server.stderr()}`);
});

test('the holder hears of a release request on its next call and declines it', async () => {
  const held = await a.client.callTool({
    name: 'lock_acquire',
    arguments: { paths: ['lock:deploy/production'] },
  });
  assert.equal(held.isError ?? false, false, JSON.stringify(held));
  assert.equal((await rest(KEY_B, 'POST', '/lease', { resource: 'lock:deploy/production' })).status, 409);
  const asked = await rest(KEY_B, 'POST', '/release-request', {
    resource: 'lock:deploy/production',
    reason: 'hotfix waits for the deploy lock',
    urgency: 'high',
    deadlineSeconds: 600,
  });
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  const id = asked.body.requestId;
  assert.equal(notices.length, 0);

  const status = await a.client.callTool({ name: 'lock_status', arguments: {} });
  assert.equal(notices.length, 1, 'one notification before the answer');
  assert.equal(notices[0].level, 'warning');
  assert.equal(notices[0].logger, 'leasehold');
  assert.equal(notices[0].data.type, 'release_requested');
  assert.equal(notices[0].data.requestId, id);
  assert.equal(notices[0].data.requester, 'did:agent:b');
  assert.equal(notices[0].data.urgency, 'high');
  assert.match(notices[0].data.message, /did:agent:b asks you to release lock:deploy\/production/);
  assert.equal(status.structuredContent.releaseRequests[0].requestId, id);

  // Told once per session.
  await a.client.callTool({ name: 'lock_status', arguments: {} });
  assert.equal(notices.length, 1);

  const declined = await rest(KEY_A, 'POST', `/release-request/${id}/decline`, { reason: 'mid-deploy' });
  assert.equal(declined.status, 200, JSON.stringify(declined.body));
  const after = await a.client.callTool({ name: 'lock_status', arguments: {} });
  assert.equal(after.structuredContent.releaseRequests, undefined);
  const ledger = await rest(KEY_B, 'GET', '/ledger?limit=1000');
  const kinds = ledger.body.events.map((e) => e.kind);
  assert.ok(kinds.includes('coordination.release_request.raised'), kinds.join());
  assert.ok(kinds.includes('coordination.release_request.declined'), kinds.join());
});

test('an agent with no business with the resource is refused 403', async () => {
  // b was never refused lock:other nor waits for it.
  await a.client.callTool({ name: 'lock_acquire', arguments: { paths: ['lock:other'] } });
  const none = await rest(KEY_B, 'POST', '/release-request', { resource: 'lock:other', reason: 'x' });
  assert.equal(none.status, 403, JSON.stringify(none.body));
  assert.equal(none.body.reason, 'no_business');
});

// What the soak's simulated agents do, and how every answer is judged: a 2xx, a documented
// refusal (docs/protocol.md, "Refusals"), a wait the client itself gave up — or a failure.

import http from 'node:http';

const BASE = '/api/v1/acp/coordination';
// Refusals an agent may meet in this mix; anything else is a failure.
const DOCUMENTED = new Set(['lease_held', 'deadlock', 'stale_lease', 'not_held', 'suspended', 'paused']);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = (list) => list[Math.floor(Math.random() * list.length)];
const between = (lo, hi) => lo + Math.floor(Math.random() * (hi - lo));

// A tree of paths: 40 folders of 80 files (3 200), a tenth of them hot.
export const PATHS = [];
for (let d = 0; d < 40; ++d)
  for (let f = 0; f < 80; ++f) PATHS.push(`fs:repo/pkg${d}/src/file${f}.ts`);
const HOT = PATHS.filter((_, i) => i % 10 === 0);
const somePath = () => (Math.random() < 0.3 ? pick(HOT) : pick(PATHS));

export class Tally {
  constructor() {
    this.requests = new Map(); // kind -> count
    this.refusals = new Map(); // reason -> count
    this.cancelled = 0;
    this.failures = 0;
    this.examples = [];
    this.latencies = [];
  }
  count(map, key) {
    map.set(key, (map.get(key) ?? 0) + 1);
  }
  fail(what) {
    ++this.failures;
    if (this.examples.length < 20) this.examples.push(what);
  }
  latency(ms) {
    if (this.latencies.length < 200000) this.latencies.push(ms);
    else this.latencies[Math.floor(Math.random() * 200000)] = ms;
  }
}

// One HTTP exchange on `agent`'s own keep-alive connection (each simulated agent has its own,
// as real agents on their own machines and processes do).
function exchange(ctx, agent, method, path, body, signal) {
  agent.http ??= new http.Agent({ keepAlive: true, maxSockets: 1 });
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(ctx.url + path, {
      method,
      agent: agent.http,
      signal,
      headers: {
        authorization: `Bearer ${agent.key}`,
        ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
      },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

// One REST call, judged. Returns the body of a 200, the refusal body, or null.
export async function rest(ctx, agent, kind, method, path, body, signal) {
  const { tally } = ctx;
  tally.count(tally.requests, kind);
  const start = performance.now();
  let r;
  try {
    r = await exchange(ctx, agent, method, path, body, signal);
  } catch (e) {
    if (signal?.aborted) {
      ++tally.cancelled;
      return null;
    }
    tally.fail(`${kind}: ${e.code ?? e.message}`);
    return null;
  }
  const text = r.text;
  if (kind !== 'lease-wait') tally.latency(performance.now() - start); // a parked wait is no latency
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // judged below
  }
  if (r.status === 200 || r.status === 201) return json;
  if ((r.status === 409 || r.status === 403) && json && DOCUMENTED.has(json.reason)) {
    tally.count(tally.refusals, json.reason);
    return json;
  }
  tally.fail(`${kind}: ${r.status} ${text.slice(0, 200)}`);
  return null;
}

const backOff = (refusal) =>
  Math.min(5000, refusal?.stampede?.waitMs ?? (refusal?.retryAfterSeconds ?? 1) * 1000) + between(0, 200);

// Takes one to three paths, holds them a moment (renewing now and then), lets them go.
export async function worker(ctx, agent) {
  const names = [...new Set(Array.from({ length: between(1, 4) }, somePath))];
  const mode = Math.random() < 0.4 ? 'read' : 'write';
  const got = await rest(ctx, agent, 'lease', 'POST', `${BASE}/lease`, {
    resources: names, mode, ttlMs: between(5000, 20000),
  });
  if (!got?.ok) return sleep(got ? backOff(got) : 500);
  await sleep(between(50, 1500));
  if (Math.random() < 0.1)
    await rest(ctx, agent, 'renew', 'POST', `${BASE}/renew`, { resource: got.leases[0].resource, leaseId: got.leases[0].leaseId });
  await rest(ctx, agent, 'release', 'POST', `${BASE}/release`, { resources: names });
}

// Parks in a wait on a hot path; a third of the time gives up first (the client leaves).
export async function waiter(ctx, agent) {
  const abort = new AbortController();
  const giveUp = Math.random() < 0.33 ? setTimeout(() => abort.abort(), between(100, 1500)) : null;
  const got = await rest(ctx, agent, 'lease-wait', 'POST', `${BASE}/lease`, {
    resource: pick(HOT), waitMs: between(1000, 8000), ttlMs: 5000,
  }, abort.signal);
  clearTimeout(giveUp);
  if (got?.ok) {
    await sleep(between(50, 500));
    await rest(ctx, agent, 'release', 'POST', `${BASE}/release`, {});
  }
}

// A pair that takes one lock each, waits until the other has its own, then asks for the
// other's: the first to ask is refused (lease_held, and counted as waiting), the second is
// refused as a deadlock — its wait would close the cycle. Then both let go.
export async function deadlocker(ctx, agent, pair) {
  const mine = `lock:soak/pair${pair.index}/${agent.side}`;
  const theirs = `lock:soak/pair${pair.index}/${agent.side === 'a' ? 'b' : 'a'}`;
  const got = await rest(ctx, agent, 'lease', 'POST', `${BASE}/lease`, { resource: mine, ttlMs: 10000 });
  if (got?.ok) {
    pair.holding.add(agent.side);
    for (let i = 0; i < 40 && pair.holding.size < 2; ++i) await sleep(25);
    if (agent.side === 'b') await sleep(50); // a asks first
    await rest(ctx, agent, 'lease-cross', 'POST', `${BASE}/lease`, { resource: theirs, ttlMs: 10000 });
    await sleep(100); // both have asked before either lets go
  }
  pair.holding.delete(agent.side);
  await rest(ctx, agent, 'release', 'POST', `${BASE}/release`, {});
}

// Takes a lease and "crashes": never releases it; it expires and costs the agent trust.
export async function crasher(ctx, agent) {
  await rest(ctx, agent, 'lease', 'POST', `${BASE}/lease`, { resource: somePath(), ttlMs: between(1000, 8000) });
  await sleep(between(5000, 15000));
}

// An agent on MCP through the official SDK: lock, look, unlock.
export async function mcpAgent(ctx, agent) {
  const { tally } = ctx;
  const call = async (name, args) => {
    tally.count(tally.requests, `mcp:${name}`);
    const start = performance.now();
    try {
      const result = await agent.client.callTool({ name, arguments: args });
      if (!args.wait) tally.latency(performance.now() - start);
      if (result.isError) {
        const reason = result.structuredContent?.reason;
        if (DOCUMENTED.has(reason)) tally.count(tally.refusals, reason);
        else tally.fail(`mcp ${name}: ${JSON.stringify(result).slice(0, 200)}`);
      }
      return result;
    } catch (e) {
      tally.fail(`mcp ${name}: ${e.message}`);
      return null;
    }
  };
  const paths = [somePath(), somePath()];
  const got = await call('lock_acquire', { paths, wait: Math.random() < 0.5 ? 0 : 2, ttl: 20 });
  if (got && !got.isError) {
    await call('lock_status', {});
    await sleep(between(100, 1500));
    await call('lock_release', { paths });
  }
}

// The operator: looks at the views, frees crashed holders, suspends one for a while, pauses
// admissions for three seconds once, and reads the ledger.
export async function operator(ctx, admin, crashers, stopping) {
  let round = 0;
  let paused = false;
  while (!stopping()) {
    await sleep(5000);
    ++round;
    await rest(ctx, admin, 'status', 'GET', `${BASE}/status`);
    await rest(ctx, admin, 'wait-view', 'GET', `${BASE}/wait`);
    await rest(ctx, admin, 'ledger', 'GET', `${BASE}/ledger?since=0&limit=100`);
    if (round % 3 === 0 && crashers.length)
      await rest(ctx, admin, 'admin', 'POST', `${BASE}/admin/release-holder`, { actorDid: pick(crashers).did });
    if (round % 6 === 0 && crashers.length) {
      const who = pick(crashers).did;
      await rest(ctx, admin, 'admin', 'POST', `${BASE}/admin/suspend`, { actorDid: who, suspended: true });
      await sleep(3000);
      await rest(ctx, admin, 'admin', 'POST', `${BASE}/admin/suspend`, { actorDid: who, suspended: false });
    }
    if (!paused && ctx.elapsedShare() > 0.5) {
      paused = true;
      await rest(ctx, admin, 'admin', 'POST', `${BASE}/admin/pause`, { paused: true });
      await sleep(3000);
      await rest(ctx, admin, 'admin', 'POST', `${BASE}/admin/pause`, { paused: false });
    }
  }
}

export { sleep, between };

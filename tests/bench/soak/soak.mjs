// Soak: many simulated agents against one Leasehold on disk for a while, then checks.
//
//   node tests/bench/soak/soak.mjs --binary build/app/leasehold [--minutes 10] [--agents 1000]
//        [--console] [--json FILE]
//
// The mix (agents.mjs): REST workers over a tree of 3 200 paths (reads and writes, renewals),
// waiters parked on hot paths (a third give up and leave), pairs that deadlock on purpose,
// crashed holders that never release, a tenth of the agents on MCP through the official SDK,
// and an operator pulling levers (release-holder, suspend, a pause). With --console the
// service runs with its window open on an Xvfb display of its own.
//
// At the end: no request failed other than by a documented refusal; the engine's invariants
// hold (GET /admin/invariants); once every agent has let go and the crashed holders' leases
// have expired, no lease is left; the ledger's sequence has no gap; RSS, descriptors and the
// database's size are sampled every 5 s and their growth per minute after warm-up reported
// (and, on runs of 10 minutes or more, held to a bound). Exit 0 when every check holds.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

import { Tally, crasher, deadlocker, mcpAgent, operator, sleep, waiter, worker } from './agents.mjs';
import { checkLedger, makeKeys, sample, slope, startService } from './service.mjs';

const sdk = (path) => new URL(`../../mcp/node_modules/@modelcontextprotocol/sdk/dist/esm/${path}`, import.meta.url).href;
const { Client } = await import(sdk('client/index.js'));
const { StreamableHTTPClientTransport } = await import(sdk('client/streamableHttp.js'));

const { values: opts } = parseArgs({
  options: {
    binary: { type: 'string', default: process.env.LEASEHOLD_BINARY ?? 'build/app/leasehold' },
    minutes: { type: 'string', default: process.env.SOAK_MINUTES ?? '10' },
    agents: { type: 'string', default: process.env.SOAK_AGENTS ?? '1000' },
    console: { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});
const minutes = Number(opts.minutes);
const agentCount = Number(opts.agents);
const durationMs = minutes * 60_000;
const retainRows = 200_000;

const dir = mkdtempSync(join(tmpdir(), 'leasehold-soak-'));
const keys = makeKeys(agentCount);
const service = await startService({ binary: resolve(opts.binary), dir, keys, console: opts.console, retainRows });
const tally = new Tally();
const started = Date.now();
const ctx = { url: service.url, tally, elapsedShare: () => (Date.now() - started) / durationMs };
let stop = false;
const stopping = () => stop;
console.log(`soak: ${agentCount} agents for ${minutes} min against ${service.url} (pid ${service.pid}${opts.console ? ', console on Xvfb' : ', headless'})`);

// Roles by index: every 10th on MCP, every 50th a crasher, 2 in 100 a deadlocking pair, every
// 20th a waiter, the rest REST workers.
const crashers = [];
const pairs = new Map();
const loops = [];
for (let i = 0; i < agentCount; ++i) {
  const agent = keys.agents[i];
  let step;
  if (i % 10 === 0) {
    agent.client = new Client({ name: `soak-${i}`, version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${agent.key}` } },
    });
    step = async () => {
      if (!agent.connected) {
        await agent.client.connect(transport);
        agent.connected = true;
      }
      await mcpAgent(ctx, agent);
    };
  } else if (i % 50 === 1) {
    crashers.push(agent);
    step = () => crasher(ctx, agent);
  } else if (i % 100 === 2 || i % 100 === 3) {
    agent.side = i % 100 === 2 ? 'a' : 'b';
    const index = Math.floor(i / 100);
    if (!pairs.has(index)) pairs.set(index, { index, holding: new Set() });
    const pair = pairs.get(index);
    step = () => deadlocker(ctx, agent, pair);
  } else if (i % 20 === 4) {
    step = () => waiter(ctx, agent);
  } else {
    step = () => worker(ctx, agent);
  }
  loops.push((async () => {
    await sleep(Math.random() * 5000); // arrive over the first five seconds
    while (!stop) {
      try {
        await step();
      } catch (e) {
        tally.fail(`agent ${agent.did}: ${e.message}`);
      }
      await sleep(200 + Math.random() * 1800);
    }
  })());
}
loops.push(operator(ctx, keys.admin, crashers, stopping));

// How late the driver's own event loop runs: the part of a latency that is the driver's.
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
const samples = [];
const gauge = (text, name) => Number(new RegExp(`^${name}\\s+(\\S+)`, 'm').exec(text)?.[1] ?? NaN);
const sampler = setInterval(() => {
  if (service.exited()) return;
  const point = { t: (Date.now() - started) / 60_000, ...sample(service.pid, service.data) };
  samples.push(point);
  fetch(`${service.url}/metrics`).then((r) => r.text()).then((text) => {
    point.connections = gauge(text, 'leasehold_open_connections');
    point.parked = gauge(text, 'leasehold_parked_connections');
  }).catch(() => {});
}, 5000);

await sleep(durationMs);
stop = true;
await Promise.all(loops);
clearInterval(sampler);
lag.disable();

// Everyone who can lets go; the crashed holders' leases expire on their own.
const BASE = '/api/v1/acp/coordination';
const admin = { authorization: `Bearer ${keys.admin.key}` };
for (const agent of keys.agents) {
  if (agent.client) await agent.client.close().catch(() => {});
}
const checks = [];
const check = (name, ok, detail) => checks.push({ name, ok, detail });
let leasesLeft = -1;
for (let i = 0; i < 120 && leasesLeft !== 0; ++i) {
  const status = await (await fetch(`${service.url}${BASE}/status`, { headers: admin })).json();
  leasesLeft = status.leases.length;
  if (leasesLeft !== 0) await sleep(500);
}
const invariants = await (await fetch(`${service.url}${BASE}/admin/invariants`, { headers: admin })).json();
const ledger = await checkLedger(service.url, keys.admin.key);
const metrics = await (await fetch(`${service.url}/metrics`)).text();
const dropped = Number(/leasehold_store_dropped_events_total\s+(\d+)/.exec(metrics)?.[1] ?? 0);

const warm = samples.filter((s) => s.t >= Math.min(1, minutes / 4));
const growth = { rssMiBPerMin: slope(warm, 'rssMiB'), fdsPerMin: slope(warm, 'fds'), dbMiBPerMin: slope(warm, 'dbMiB') };
const last = samples.at(-1) ?? {};
const latencies = tally.latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]?.toFixed(1);
const total = [...tally.requests.values()].reduce((a, b) => a + b, 0);

check('no request failed other than by a documented refusal', tally.failures === 0, `${tally.failures} failures`);
check('the service stayed up', service.exited() === null, JSON.stringify(service.exited()));
check('engine invariants hold', invariants.ok === true, JSON.stringify(invariants));
check('no lease left once everyone let go and crashed holders expired', leasesLeft === 0, `${leasesLeft} left`);
check('ledger sequence without a gap', ledger.gaps.length === 0, `${ledger.count} events ${ledger.first}..${ledger.last}, gaps ${JSON.stringify(ledger.gaps)}, ${dropped} dropped by the store's queue`);
check('ledger within retention', ledger.count <= retainRows + 16_384, `${ledger.count} rows kept, retention ${retainRows}`);
if (minutes >= 10) {
  check('RSS flat after warm-up', growth.rssMiBPerMin < 5, `${growth.rssMiBPerMin.toFixed(2)} MiB/min`);
  check('descriptors flat after warm-up', growth.fdsPerMin < 10, `${growth.fdsPerMin.toFixed(2)} /min`);
}
const code = await service.stop();
check('clean shutdown', code.code === 0, JSON.stringify(code));

const report = {
  minutes, agents: agentCount, console: opts.console, requests: total,
  requestsPerSecond: total / (durationMs / 1000),
  byKind: Object.fromEntries(tally.requests), refusals: Object.fromEntries(tally.refusals),
  cancelledByClient: tally.cancelled, failures: tally.failures, failureExamples: tally.examples,
  latencyMs: { p50: pct(0.5), p99: pct(0.99), p999: pct(0.999) },
  driverLagMs: { p50: +(lag.percentile(50) / 1e6).toFixed(1), p99: +(lag.percentile(99) / 1e6).toFixed(1) },
  samples: samples.map((s) => ({ t: +s.t.toFixed(2), rssMiB: +s.rssMiB.toFixed(1), fds: s.fds, dbMiB: +s.dbMiB.toFixed(1), connections: s.connections, parked: s.parked })),
  growthAfterWarmUp: growth, end: last, ledger, checks,
};
if (opts.json) writeFileSync(opts.json, JSON.stringify(report, null, 2));
console.log(`soak: ${total} requests (${report.requestsPerSecond.toFixed(0)}/s), refusals ${JSON.stringify(report.refusals)}, cancelled by client ${tally.cancelled}, failures ${tally.failures}`);
console.log(`soak: by kind ${JSON.stringify(report.byKind)}`);
console.log(`soak: latency ms (parked waits left out) p50 ${report.latencyMs.p50} p99 ${report.latencyMs.p99} p99.9 ${report.latencyMs.p999}; the driver's own event-loop lag p50 ${report.driverLagMs.p50} p99 ${report.driverLagMs.p99}`);
console.log(`soak: end RSS ${last.rssMiB?.toFixed(1)} MiB, ${last.fds} fds, db ${last.dbMiB?.toFixed(1)} MiB; after warm-up RSS ${growth.rssMiBPerMin.toFixed(2)} MiB/min, fds ${growth.fdsPerMin.toFixed(2)}/min, db ${growth.dbMiBPerMin.toFixed(2)} MiB/min`);
for (const c of checks) console.log(`soak: ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
for (const e of tally.examples) console.log(`soak: failure: ${e}`);
rmSync(dir, { recursive: true, force: true });
process.exit(checks.every((c) => c.ok) ? 0 : 1);

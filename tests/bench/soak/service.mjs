// The service under soak: one Leasehold on disk (headless, or with its console on an Xvfb
// display of its own), its keys and config, and what is sampled from outside while it runs.

import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

// Starts Xvfb on a free display (it picks one and names it on a pipe).
async function startXvfb() {
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  const display = await new Promise((resolve, reject) => {
    let text = '';
    xvfb.stdio[3].on('data', (chunk) => {
      text += chunk;
      if (text.includes('\n')) resolve(`:${text.trim()}`);
    });
    xvfb.on('exit', (code) => reject(new Error(`Xvfb exited (${code})`)));
  });
  return { display, stop: () => xvfb.kill('SIGTERM') };
}

// Keys for `agents` agents (did:agent:soak-0001 ...) and one operator.
export function makeKeys(agents) {
  const entries = [];
  for (let i = 1; i <= agents; ++i)
    entries.push({ key: randomBytes(16).toString('hex'), did: `did:agent:soak-${String(i).padStart(4, '0')}`, role: 'agent' });
  const admin = { key: randomBytes(16).toString('hex'), did: 'did:op:soak', role: 'admin' };
  return { agents: entries, admin, file: { keys: [...entries, admin] } };
}

export async function startService({ binary, dir, keys, console: withConsole, retainRows }) {
  const data = join(dir, 'data');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(dir, 'keys.json'), JSON.stringify(keys.file), { mode: 0o600 });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ledgerRetainRows: retainRows }));
  const args = ['--port', '0', '--data-dir', data, '--keys', join(dir, 'keys.json'),
    '--config', join(dir, 'config.json'), '--workspace', workspace];
  const env = { ...process.env };
  let xvfb = null;
  if (withConsole) {
    xvfb = await startXvfb();
    env.DISPLAY = xvfb.display;
    env.QT_QPA_PLATFORM = 'xcb';
  } else {
    args.unshift('--headless');
  }
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-20000);
  });
  let exited = null;
  const exit = new Promise((resolve) => child.on('exit', (code, signal) => {
    exited = { code, signal };
    resolve(exited);
  }));
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^listening (http:\/\/\S+)$/.exec(line);
      if (match) resolve(match[1]);
    });
    exit.then(() => reject(new Error(`leasehold exited before listening: ${stderr}`)));
  });
  return {
    url,
    pid: child.pid,
    data,
    exited: () => exited,
    stderr: () => stderr,
    async stop() {
      if (!exited) child.kill('SIGTERM');
      const result = await exit;
      xvfb?.stop();
      return result;
    },
  };
}

// RSS (MiB) and open descriptors of `pid`, and the database's size on disk (MiB).
export function sample(pid, data) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  let dbBytes = 0;
  for (const name of readdirSync(data)) {
    if (name.startsWith('leasehold.db')) dbBytes += statSync(join(data, name)).size;
  }
  return { rssMiB: rssKb / 1024, fds, dbMiB: dbBytes / (1024 * 1024) };
}

// Least-squares slope of `key` over samples ({t: minutes, ...}) per minute.
export function slope(samples, key) {
  const n = samples.length;
  if (n < 2) return 0;
  const mt = samples.reduce((s, x) => s + x.t, 0) / n;
  const my = samples.reduce((s, x) => s + x[key], 0) / n;
  let num = 0;
  let den = 0;
  for (const x of samples) {
    num += (x.t - mt) * (x[key] - my);
    den += (x.t - mt) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

// Reads the whole ledger through the export and checks its sequence numbers run without a gap.
export async function checkLedger(url, adminKey) {
  let since = 0;
  let first = null;
  let last = null;
  let count = 0;
  const gaps = [];
  for (;;) {
    const r = await fetch(`${url}/api/v1/acp/coordination/ledger/export?format=jsonl&since=${since}&limit=100000`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    if (r.status !== 200) throw new Error(`ledger export answered ${r.status}`);
    const text = await r.text();
    for (const line of text.split('\n')) {
      if (!line) continue;
      const event = JSON.parse(line);
      if (typeof event?.seq !== 'number') throw new Error(`ledger export line without a seq: ${line.slice(0, 300)}`);
      const seq = event.seq;
      if (first === null) first = seq;
      else if (seq !== last + 1 && gaps.length < 10) gaps.push([last, seq]);
      last = seq;
      ++count;
    }
    const next = r.headers.get('x-ledger-next');
    if (!next || Number(next) <= since || text.length === 0) break;
    since = Number(next);
  }
  return { first, last, count, gaps };
}

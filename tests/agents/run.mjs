#!/usr/bin/env node
// One real coding-agent CLI, unmodified, against a real Leasehold:
//
//   node tests/agents/run.mjs claude-code|codex|gemini|copilot|qwen|opencode
//
// It starts `leasehold --headless --port 0` with a keys file (the agent did:agent:cli, another
// agent did:agent:holder), configures the CLI with ONE `leasehold ctl install-hooks NAME`
// command (run twice: the second changes nothing, byte for byte), and runs it non-interactively
// against the scripted fake model (fakemodel/) with LEASEHOLD_KEY in its environment. The holder
// holds src/app.txt and src/held.txt. The script edits src/app.txt: the hook parks on the
// service's wait, and the test lets go of app.txt once GET /wait shows the agent parked on it;
// the edit is then made. It edits src/held.txt: the holder keeps it, the wait (--wait 5) runs
// out, the edit is denied and the model's next request carries the holder's name. It runs
// `sed -i` on src/held.txt: stopped the same way. It runs a command during which the filesystem
// gate refuses a write (the command writes the gate's refusal line into $LEASEHOLD_RUN, as the
// gate does): the post-tool hook tells the model. When the CLI has exited, the agent holds
// nothing.
//
// Exit 0 passed, 1 failed, 77 skipped (the CLI is not installed: tests/agents/install.sh; the
// reason is printed). Environment: LEASEHOLD_BINARY (the leasehold executable),
// LEASEHOLD_AGENT_CACHE (install.sh's cache), LEASEHOLD_AGENTS_NETNS=0 (do not run in a network
// namespace of its own; by default, as root, everything runs with loopback only),
// LEASEHOLD_AGENTS_KEEP=1 (keep the scratch folder).

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

import { CLIS, GATE_SCRIPT } from './clis.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { read: readLog, resultOf } = createRequire(import.meta.url)('./fakemodel/log.js');
const WAIT_S = 5;
const RUN_LIMIT_MS = 150_000;
const KEYS = {
  cli: 'key-agent-cli-0123456789abcdef',
  holder: 'key-agent-holder-0123456789ab',
  admin: 'key-admin-0123456789abcdef0123',
};

const name = process.argv[2];
const cli = CLIS[name];
if (!cli) {
  console.error(`usage: run.mjs ${Object.keys(CLIS).join('|')}`);
  process.exit(2);
}
const started = Date.now();
const log = (msg) => console.log(`[${name} +${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);
const skip = (why) => { console.log(`SKIPPED ${name}: ${why}`); process.exit(77); };

// As root, run everything in a network namespace of its own: only loopback, so any request
// other than to the fake model and the instance fails.
if (!process.env.LEASEHOLD_AGENTS_IN_NETNS && process.env.LEASEHOLD_AGENTS_NETNS !== '0' &&
    process.getuid?.() === 0 &&
    spawnSync('sh', ['-c', 'command -v unshare && command -v ip'], { stdio: 'ignore' }).status === 0 &&
    spawnSync('unshare', ['-n', 'true'], { stdio: 'ignore' }).status === 0) {
  const r = spawnSync('unshare', ['-n', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"',
                                  process.execPath, fileURLToPath(import.meta.url), name],
                      { stdio: 'inherit', env: { ...process.env, LEASEHOLD_AGENTS_IN_NETNS: '1' } });
  process.exit(r.status ?? 1);
}

const binary = process.env.LEASEHOLD_BINARY;
if (!binary || !existsSync(binary)) {
  console.error('run.mjs: set LEASEHOLD_BINARY to the leasehold executable');
  process.exit(1);
}

// The CLI, installed by tests/agents/install.sh (nothing is installed here).
const install = join(here, 'install.sh');
const check = spawnSync(install, ['--check', cli.install], { encoding: 'utf8' });
if (check.status !== 0)
  skip(`${cli.install} is not installed (${check.stderr.trim()}); run tests/agents/install.sh`);
const found = Object.fromEntries(spawnSync(install, ['--env', cli.install], { encoding: 'utf8' })
  .stdout.trim().split('\n').map((l) => l.split('=')).map(([k, ...v]) => [k, v.join('=').replace(/^'|'$/g, '')]));
const cliBinary = found[`LEASEHOLD_AGENT_${cli.install.toUpperCase()}`];
const node22 = found.LEASEHOLD_AGENT_NODE22;

const failures = [];
const expect = (ok, what) => { if (!ok) failures.push(what); log(`${ok ? 'ok  ' : 'FAIL'} ${what}`); };

const scratch = mkdtempSync(join(tmpdir(), `leasehold-agent-${name}-`));
const proj = join(scratch, 'proj');
const home = join(scratch, 'home');
const children = [];
const cleanup = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  if (!process.env.LEASEHOLD_AGENTS_KEEP) rmSync(scratch, { recursive: true, force: true });
};

function startProcess(cmd, args, opts, ready) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  children.push(child);
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const v = ready(line);
      if (v) resolve(v);
    });
    child.on('exit', (code) => reject(new Error(`${cmd} exited (${code}): ${err}`)));
  });
}

async function rest(method, path, key, body) {
  const r = await fetch(`${url}/api/v1/acp/coordination${path}`, {
    method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, body: await r.json() };
}

function configBytes() {
  const f = join(proj, cli.config);
  return existsSync(f) ? readFileSync(f) : null;
}

let url;
try {
  mkdirSync(join(proj, 'src'), { recursive: true });
  mkdirSync(home, { recursive: true });
  for (const f of ['app.txt', 'held.txt']) writeFileSync(join(proj, 'src', f), 'hello\nworld\n');
  mkdirSync(join(proj, 'tools'));
  writeFileSync(join(proj, 'tools/refuse-write.sh'), GATE_SCRIPT, { mode: 0o755 });
  spawnSync('sh', ['-c', 'git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm init'],
            { cwd: proj });

  // The instance.
  writeFileSync(join(scratch, 'keys.json'), JSON.stringify({ keys: [
    { key: KEYS.cli, did: 'did:agent:cli', role: 'agent' },
    { key: KEYS.holder, did: 'did:agent:holder', role: 'agent' },
    { key: KEYS.admin, did: 'did:op:test', role: 'admin' }] }), { mode: 0o600 });
  url = await startProcess(binary, ['--headless', '--port', '0', '--data-dir', join(scratch, 'data'),
                                    '--keys', join(scratch, 'keys.json')], {},
                           (l) => /^listening (http:\/\/\S+)$/.exec(l)?.[1]);
  log(`leasehold at ${url}; network: ${process.env.LEASEHOLD_AGENTS_IN_NETNS
    ? 'loopback only (a namespace of its own)' : "the machine's (no namespace of its own)"}`);

  // The fake model, with this CLI's script.
  const ctx = { proj, home, cache: process.env.LEASEHOLD_AGENT_CACHE || '/var/cache/leasehold/agents' };
  const scriptFile = join(scratch, 'script.json');
  const requests = join(scratch, 'requests.jsonl');
  writeFileSync(scriptFile, '{}');
  ctx.port = await startProcess(process.execPath, [join(here, 'fakemodel/server.js'), '--script', scriptFile,
                                                   '--log', requests, '--port', '0'], {},
                                (l) => (/^\d+$/.test(l) ? Number(l) : null));
  const turns = cli.turns(ctx);
  await fetch(`http://127.0.0.1:${ctx.port}/_fake/script`, { method: 'POST', body: JSON.stringify({ turns }) });
  cli.setup?.(ctx);

  // ONE command configures the agent; a second changes nothing.
  const installArgs = ['ctl', 'install-hooks', name, '--project', proj, '--url', url, '--wait', String(WAIT_S)];
  const first = spawnSync(binary, installArgs, { encoding: 'utf8', env: { ...process.env, HOME: home } });
  expect(first.status === 0, `install-hooks ${name} exits 0 (${first.stderr.trim() || 'no error'})`);
  const once = configBytes();
  const second = spawnSync(binary, installArgs, { encoding: 'utf8', env: { ...process.env, HOME: home } });
  expect(second.status === 0 && once !== null && Buffer.compare(once, configBytes()) === 0 &&
         /up to date/.test(second.stdout), 'install-hooks twice changes nothing, byte for byte');
  expect(!once?.includes(KEYS.cli), 'the key is in no configuration file');

  // The holder has both files.
  for (const f of ['src/app.txt', 'src/held.txt'])
    expect((await rest('POST', '/lease', KEYS.holder, { resource: `fs:${f}`, ttlMs: 600_000 })).status === 200,
           `did:agent:holder holds ${f}`);

  // The run. The holder lets go of app.txt the moment the agent's hook is parked on it.
  const { args, env } = cli.command(ctx);
  const path = `${node22 && cli.command(ctx).node22 ? `${dirname(node22)}:` : ''}/usr/bin:/bin`;
  // LEASEHOLD_RUN: where `leasehold run` keeps the gate's refusals, as it sets it.
  mkdirSync(join(scratch, 'run'));
  const agentEnv = { PATH: path, HOME: home, TERM: 'dumb', LEASEHOLD_KEY: KEYS.cli,
                     LEASEHOLD_RUN: join(scratch, 'run'), ...env };
  const run = spawn(cliBinary, args, { cwd: proj, env: agentEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(run);
  let out = '';
  let err = '';
  run.stdout.on('data', (d) => { out += d; });
  run.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => run.on('exit', (code, signal) => resolve(code ?? signal)));
  const limit = setTimeout(() => run.kill('SIGKILL'), RUN_LIMIT_MS);
  let parkedAt = null;
  let done = false;
  exited.then(() => { done = true; });
  while (!done && parkedAt === null) {
    const wait = await rest('GET', '/wait?resource=fs:src/app.txt', KEYS.holder);
    if ((wait.body.waiters ?? []).some((w) => w.actorDid === 'did:agent:cli' && w.kind === 'parked')) {
      parkedAt = Date.now();
      log('the agent\'s hook is parked on fs:src/app.txt; the holder lets go');
      await rest('POST', '/release', KEYS.holder, { resource: 'fs:src/app.txt' });
    } else {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const code = await exited;
  clearTimeout(limit);
  log(`${name} exited (${code}) after ${((Date.now() - started) / 1000).toFixed(1)}s`);
  writeFileSync(join(scratch, 'out.txt'), out);
  writeFileSync(join(scratch, 'err.txt'), err);

  // What happened.
  expect(parkedAt !== null, 'the edit of a held file waited in the hook (parked on the service)');
  const app = readFileSync(join(proj, 'src/app.txt'), 'utf8');
  expect(/EDITED/.test(app), `once the holder let go, the edit was made (src/app.txt: ${JSON.stringify(app)})`);
  const held = readFileSync(join(proj, 'src/held.txt'), 'utf8');
  expect(held === 'hello\nworld\n', `src/held.txt is unchanged (${JSON.stringify(held)})`);
  const entries = readLog(requests);
  const callOf = (turn) => entries.find((e) => e.turn === turn)?.answer?.calls?.[0]?.id;
  for (const [turn, what] of [[cli.heldTurn, 'the held edit'], [cli.sedTurn, 'the sed -i']]) {
    const id = callOf(turn);
    const text = id ? resultOf(entries, id) : null;
    expect(typeof text === 'string' && text.includes('held by did:agent:holder') && /waited/.test(text),
           `${what} was denied after the wait; the model's next request names the holder: ${JSON.stringify(text?.slice(0, 240))}`);
  }
  // The gate's refusal during the last command reached the model after it.
  const gateCall = callOf(cli.sedTurn + 1);
  const after = entries.find((e) => e.seq > (entries.find((x) => x.turn === cli.sedTurn + 1)?.seq ?? Infinity));
  const told = after && JSON.stringify(after.body).match(/the filesystem gate refused 1 change[^"\\]*/);
  expect(gateCall && told, `the gate's refusal during a command reached the model: ${JSON.stringify(told?.[0])}`);
  const status = await rest('GET', '/status', KEYS.admin);
  const mine = (status.body.leases ?? []).filter((l) => l.holder === 'did:agent:cli');
  expect(mine.length === 0, `the session's leases are gone when it ends (${mine.map((l) => l.resource).join(', ') || 'none left'})`);
  const theirs = (status.body.leases ?? []).filter((l) => l.holder === 'did:agent:holder').map((l) => l.resource);
  expect(theirs.length === 1 && theirs[0] === 'fs:src/held.txt', `the holder keeps fs:src/held.txt (${theirs.join(', ')})`);
  if (failures.length) {
    log(`stderr of ${name} (last lines):\n${err.split('\n').slice(-15).join('\n')}`);
    log(`the model was asked ${entries.length} times; scratch kept in ${scratch}`);
    process.env.LEASEHOLD_AGENTS_KEEP = '1';
  }
} catch (e) {
  failures.push(String(e?.stack ?? e));
  console.error(e);
  process.env.LEASEHOLD_AGENTS_KEEP = '1';
} finally {
  cleanup();
}
log(failures.length ? `FAILED: ${failures.length} check(s)` : 'passed');
process.exit(failures.length ? 1 : 0);

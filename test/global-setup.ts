import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer } from '../src/connection/dev-server';
import { CHROMIUM_PATH } from './helpers/browser';
import { startPacking } from './helpers/packed-package';
import { programsDir } from './helpers/processes';

/**
 * Starts one in-memory Temporal dev server and bundles the workflow code once. Test files read
 * both from the environment, which jest's worker processes inherit.
 */
export default async function globalSetup(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-agents-test-'));
  const [server, bundle] = await Promise.all([
    startDevServer({ logFile: join(dir, 'dev-server.log') }, process.env),
    bundleWorkflowCode({ workflowsPath: require.resolve('../src/workflows/bundle'), logger: quietLogger }),
  ]);
  const bundlePath = join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  process.env.TEST_TEMPORAL_ADDRESS = server.address;
  process.env.TEST_WORKFLOW_BUNDLE = bundlePath;
  // Where the test files that need the packed package share one `npm pack` (test/helpers/packed-package.ts).
  process.env.TEST_PACK_DIR = mkdtempSync(join(dir, 'pack-'));
  // Packed in the background from now on: the package tests find it ready, or nearly.
  (globalThis as Record<string, unknown>).__packing = startPacking(process.env.TEST_PACK_DIR);
  // The programs the tests start, bundled once for the run (test/helpers/bundle-program.js).
  process.env.TEST_PROGRAM_DIR = programsDir();
  // Images go to a blob store of the test run's, never the home directory's (workers and CLIs inherit it).
  process.env.AGENT_BLOB_DIR = join(dir, 'blobs');
  // Large payloads too (Temporal's External Storage): a directory of this run's.
  process.env.AGENT_PAYLOAD_STORE = join(dir, 'payloads');
  (globalThis as Record<string, unknown>).__devServer = server;
  // The browser tests skip themselves without a browser (see describeInBrowser); said once here.
  if (!existsSync(CHROMIUM_PATH) && process.env.REQUIRE_BROWSER !== '1')
    process.stderr.write(
      `\nThe browser tests are skipped: no Chromium at ${CHROMIUM_PATH} (npm run setup:browser installs it).\n`,
    );
}

const noop = () => undefined;
const quietLogger = {
  log: noop,
  trace: noop,
  debug: noop,
  info: noop,
  warn: noop,
  error: (m: string) => console.error(m),
};

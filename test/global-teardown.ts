import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { DevServer } from '../src/connection/dev-server';

export default async function globalTeardown(): Promise<void> {
  await ((globalThis as Record<string, unknown>).__devServer as DevServer | undefined)?.stop();
  // Packing still under way (a short run): stopped, so its build does not outlive the run.
  const packing = (globalThis as Record<string, unknown>).__packing as ChildProcess | undefined;
  if (packing?.pid && packing.exitCode === null)
    try {
      process.kill(-packing.pid, 'SIGTERM');
    } catch {
      // already done
    }
  if (process.env.TEST_PROGRAM_DIR) rmSync(process.env.TEST_PROGRAM_DIR, { recursive: true, force: true });
  if (process.env.TEST_PACK_DIR) rmSync(process.env.TEST_PACK_DIR, { recursive: true, force: true });
}

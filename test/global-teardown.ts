import { rmSync } from 'node:fs';
import type { DevServer } from '../src/connection/dev-server';

export default async function globalTeardown(): Promise<void> {
  await ((globalThis as Record<string, unknown>).__devServer as DevServer | undefined)?.stop();
  if (process.env.TEST_PACK_DIR) rmSync(process.env.TEST_PACK_DIR, { recursive: true, force: true });
}

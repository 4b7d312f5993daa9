import type { DevServer } from '../src/connection/dev-server';

export default async function globalTeardown(): Promise<void> {
  await ((globalThis as Record<string, unknown>).__devServer as DevServer | undefined)?.stop();
}

import { basename } from 'node:path';

/**
 * How the person started this program, for usage lines and hints: `client.ts` in this repository,
 * `durable-agents` for the installed bin (also when run as `node .../durable-agents.js`).
 */
export function commandName(argv1: string | undefined = process.argv[1]): string {
  const name = argv1 ? basename(argv1) : '';
  if (name === 'client.ts') return name;
  return 'durable-agents';
}

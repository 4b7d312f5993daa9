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

/**
 * The command a person types to run this program again, for hints ("approve with: ..."):
 * `npx durable-agents` in a project (it works with a local or a global install), `client.ts` here.
 */
export function hintCommand(argv1: string | undefined = process.argv[1]): string {
  const name = commandName(argv1);
  return name === 'client.ts' ? name : `npx ${name}`;
}

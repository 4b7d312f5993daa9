import { MAX_MEMORY_PAGE, memoryFilterProblem, type MemoryFilter } from '../core/facts/memory-scope';
import type { Fact, MemoryDeletion } from '../core/facts/fact';
import { administerMemory } from '../client/memory';
import { commandName } from './command-name';
import { parseFlags, UsageError } from './option-flags';
import { inSession, type CommandTarget } from './session';
import { tableText } from './table';

/** The usage lines of `memory`. */
export const MEMORY_USAGE = `usage: ${commandName()} memory list [--user U] [--tenant T] [--agent A] [--limit N] [--json]
       ${commandName()} memory show <fact-id> [--user U] [--tenant T] [--json]
       ${commandName()} memory delete --user U [--tenant T] [--agent A] [--purge] [--json]
       ${commandName()} memory export --user U [--tenant T]`;

/** What `memory` was asked. */
export type MemoryCommand =
  | { action: 'list'; filter: MemoryFilter; limit?: number; json: boolean }
  | { action: 'show'; filter: MemoryFilter; id: string; json: boolean }
  | { action: 'delete'; filter: MemoryFilter; purge: boolean; json: boolean }
  | { action: 'export'; filter: MemoryFilter; json: boolean };

/** Reads `memory ...`; every mistake is a {@link UsageError}. */
export function parseMemoryArgs(argv: string[]): MemoryCommand {
  const [action, ...rest] = argv;
  const { values, positionals } = parseFlags(rest, {
    json: { type: 'boolean' },
    user: { type: 'string' },
    tenant: { type: 'string' },
    agent: { type: 'string' },
    limit: { type: 'string' },
    purge: { type: 'boolean' },
  });
  const json = values.json ?? false;
  const filter: MemoryFilter = {
    ...(values.tenant !== undefined ? { tenant: values.tenant } : {}),
    ...(values.user !== undefined ? { user: values.user } : {}),
    ...(values.agent !== undefined ? { agent: values.agent } : {}),
  };
  const check = (allowEverything: boolean) => {
    const problem = memoryFilterProblem(filter, allowEverything);
    if (problem) throw new UsageError(problem);
  };
  switch (action) {
    case 'list': {
      if (positionals.length) throw new UsageError('memory list takes no arguments (--user U, --tenant T)');
      check(true);
      if (
        values.limit !== undefined &&
        !(/^\d+$/.test(values.limit) && Number(values.limit) >= 1 && Number(values.limit) <= MAX_MEMORY_PAGE)
      )
        throw new UsageError(`--limit must be a whole number from 1 to ${MAX_MEMORY_PAGE}, got "${values.limit}"`);
      return { action, filter, ...(values.limit !== undefined ? { limit: Number(values.limit) } : {}), json };
    }
    case 'show':
      if (positionals.length !== 1) throw new UsageError('memory show expects one <fact-id> (memory list shows them)');
      check(true);
      return { action, filter, id: positionals[0], json };
    case 'delete':
    case 'export':
      if (positionals.length) throw new UsageError(`memory ${action} takes no arguments: say whose with --user U`);
      if (values.user === undefined)
        throw new UsageError(`memory ${action} needs --user U (and --tenant T for one tenant's)`);
      check(false);
      if (action === 'export') {
        if (values.purge) throw new UsageError('--purge is for memory delete');
        return { action, filter, json: true };
      }
      return { action, filter, purge: values.purge ?? false, json };
    default:
      throw new UsageError(
        action === undefined
          ? 'memory expects list, show, delete or export'
          : `unknown memory action "${action}": list, show, delete or export`,
      );
  }
}

/** Runs `memory ...`. */
export async function runMemoryCommand(
  cmd: MemoryCommand,
  target: CommandTarget,
  io: { stdout: (text: string) => void; stderr: (line: string) => void },
  who: string,
): Promise<number> {
  const print = (json: unknown, text: string) =>
    io.stdout(cmd.json ? JSON.stringify(json, null, cmd.action === 'export' ? 2 : undefined) : text);
  const options = { taskQueue: target.taskQueue };
  return inSession({ ...target, note: (line) => (cmd.json ? undefined : io.stderr(line)) }, async ({ client }) => {
    switch (cmd.action) {
      case 'list': {
        const { facts, next } = await administerMemory(
          client,
          { op: 'list', filter: cmd.filter, ...(cmd.limit !== undefined ? { limit: cmd.limit } : {}) },
          options,
        );
        print({ facts, ...(next ? { next } : {}) }, facts.length ? factsText(facts) : 'No facts kept for that.');
        return 0;
      }
      case 'show': {
        const { fact } = await administerMemory(client, { op: 'show', filter: cmd.filter, id: cmd.id }, options);
        if (!fact) {
          io.stderr(`no fact "${cmd.id}"${cmd.filter.user ? ` of user ${cmd.filter.user}` : ''}`);
          return 1;
        }
        print(fact, factText(fact));
        return 0;
      }
      case 'delete': {
        const { deletion } = await administerMemory(
          client,
          { op: 'delete', filter: cmd.filter, by: who, ...(cmd.purge ? { purge: true } : {}) },
          options,
        );
        print(
          deletion,
          `Deleted ${deletion.facts} fact(s) and ${deletion.profiles} profile(s) of user ${cmd.filter.user}${cmd.filter.tenant ? ` in tenant ${cmd.filter.tenant}` : ' in every tenant'}; recorded (${deletion.at}, by ${deletion.by}).` +
            copiesText(deletion.copies),
        );
        return 0;
      }
      case 'export': {
        print((await administerMemory(client, { op: 'export', filter: cmd.filter }, options)).export, '');
        return 0;
      }
    }
  });
}

/** Where the deleted facts' copies were: the open workflows that took them out, the closed ones that keep them. */
function copiesText(copies: MemoryDeletion['copies']): string {
  if (!copies || (!copies.told.length && !copies.closed.length)) return '';
  const told = copies.told.length
    ? `\nTaken out of the messages of ${copies.told.length} open run(s) and conversation(s): ${copies.told.join(', ')}.`
    : '';
  const closed = copies.closed.length
    ? `\nStill in the histories of ${copies.closed.length} closed workflow(s) until the namespace's retention removes them (or add --purge): ${copies.closed.join(', ')}.`
    : '';
  if (copies.purged)
    return `${told}\nRemoved ${copies.purged.length} closed workflow(s) that held copies, with ${copies.payloads ?? 0} payload(s) they kept in the payload store: ${copies.purged.join(', ')}.`;
  return told + closed;
}

function factsText(facts: Fact[]): string {
  return tableText(
    ['ID', 'TENANT', 'USER', 'FACT', 'UPDATED'],
    facts.map((f) => [
      f.id,
      f.tenant ?? '-',
      f.user,
      f.text.length > 70 ? `${f.text.slice(0, 69)}…` : f.text,
      f.updatedAt.slice(0, 16).replace('T', ' '),
    ]),
  );
}

function factText(f: Fact): string {
  return [
    `${f.id}: ${f.text}`,
    ...(f.value !== undefined ? [`  value:      ${JSON.stringify(f.value)}`] : []),
    `  user:       ${f.user}${f.tenant ? ` (tenant ${f.tenant})` : ''}${f.agent ? `, agent ${f.agent}` : ''}`,
    `  confidence: ${f.confidence}`,
    ...(f.source ? [`  from:       ${f.source.workflowId}${f.source.ref ? ` (${f.source.ref})` : ''}`] : []),
    `  kept:       ${f.createdAt}${f.updatedAt !== f.createdAt ? `, updated ${f.updatedAt}` : ''}`,
  ].join('\n');
}

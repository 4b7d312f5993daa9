import { agentListFilterProblem } from '../../core/run/search-attributes';
import { listAgentRuns } from '../../client/list-runs';
import type { CommandContext } from '../command';
import { listText } from '../format-conversation';
import { parseFlags, UsageError, wholeNumber } from '../option-flags';
import { commandSession } from './command-session';
import { expectPositionals, JSON_FLAG } from './conversation-args';

/** `list [--status s] [--agent a] [--version v] [--tenant t] [--query "..."] [--limit N] [--json]`. */
export interface ListCommand {
  status?: string;
  agent?: string;
  agentVersion?: string;
  tenant?: string;
  query?: string;
  limit: number;
  json: boolean;
}

/** `list`'s arguments, every mistake a `UsageError` before anything connects. */
export function parse(argv: string[]): ListCommand {
  const { values, positionals } = parseFlags(argv, {
    ...JSON_FLAG,
    status: { type: 'string' },
    agent: { type: 'string' },
    version: { type: 'string' },
    tenant: { type: 'string' },
    query: { type: 'string' },
    limit: { type: 'string' },
  });
  expectPositionals('list', positionals, []);
  const filter = {
    status: values.status,
    agent: values.agent,
    agentVersion: values.version,
    tenant: values.tenant,
    query: values.query,
  };
  const problem = agentListFilterProblem(filter);
  if (problem) throw new UsageError(problem);
  const list: ListCommand = {
    limit: values.limit === undefined ? 20 : wholeNumber('--limit', values.limit, 1),
    json: values.json ?? false,
  };
  for (const [key, value] of Object.entries(filter)) if (value !== undefined) list[key as keyof typeof filter] = value;
  return list;
}

/** The runs and conversations, by their search attributes. */
export function run(cmd: ListCommand, context: CommandContext): Promise<number> {
  return commandSession(context, { json: cmd.json }, async ({ client, print }) => {
    const { json: _json, ...filter } = cmd;
    const { query, runs } = await listAgentRuns(client, filter);
    print(runs, listText(runs, query));
    return 0;
  });
}

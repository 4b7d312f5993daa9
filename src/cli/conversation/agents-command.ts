import { listAgents } from '../../client/list-agents';
import type { CommandContext } from '../command';
import { parseFlags } from '../option-flags';
import { commandSession } from './command-session';
import { expectPositionals, JSON_FLAG } from './conversation-args';

/** `agents [--json]`: the named agents of the task queue's workers. */
export interface AgentsCommand {
  json: boolean;
}

/** `agents`'s arguments, every mistake a `UsageError` before anything connects. */
export function parse(argv: string[]): AgentsCommand {
  const { values, positionals } = parseFlags(argv, JSON_FLAG);
  expectPositionals('agents', positionals, []);
  return { json: values.json ?? false };
}

/** Runs `agents`; resolves to its exit code. */
export function run(cmd: AgentsCommand, context: CommandContext): Promise<number> {
  return commandSession(context, { json: cmd.json, needsWorker: true }, async ({ client, taskQueue, print }) => {
    const agents = await listAgents(client, { taskQueue });
    const text = agents.length
      ? agents
          .map((a) =>
            [
              `${a.name}${a.description ? `: ${a.description}` : ''}`,
              `  tools: ${a.tools.join(', ') || 'none'}${a.model ? `; model: ${a.model}` : ''}${a.structuredOutput ? '; structured output' : ''}`,
            ].join('\n'),
          )
          .join('\n')
      : `The workers of task queue "${taskQueue}" have no named agents; runs use every registered tool.`;
    print(agents, text);
    return 0;
  });
}

/**
 * Command-line client.
 *   npx tsx client.ts run "<message>" [--tools a,b] [--immediate a] [--max-iterations N]
 *     [--max-time 30s] [--on-limit stop|generate] [--system "..."] [--id <workflowId>] [--json]
 * Exit codes: 0 done (any status but failed), 1 the run failed, 2 bad usage or Temporal unreachable.
 */
import { outcomeJson, outcomeText } from './src/cli/format-outcome';
import { parseRunArgs, RUN_USAGE, UsageError } from './src/cli/parse-run-args';
import { runFromCommandLine } from './src/cli/run-flow';
import { defaultTaskQueue } from './src/runtime/agent-worker';
import { installRuntimeLogging } from './src/runtime/logging';
import { defaultToolRegistry } from './src/tools';

const HELP = `durable-agents client

${RUN_USAGE}

  --tools a,b          tools for this run (default: all registered)
  --immediate a        tools that end the run right after they execute
  --max-iterations N   maximum LLM calls (default 15)
  --max-time 30s       wall-clock limit for the run (ms, s, m, h)
  --on-limit MODE      at the iteration limit: stop (default) or generate a last answer
  --system "..."       system message
  --id ID              workflow id (default: agent-<words>-<random>)
  --json               print exactly one JSON object`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    console.log(HELP);
    return command ? 0 : 2;
  }
  if (command !== 'run') throw new UsageError(`unknown command "${command}"`);
  const { input, workflowId, json } = parseRunArgs(rest, defaultToolRegistry().names());
  // The run's outcome says what failed; the SDK's per-attempt warnings would only repeat it.
  installRuntimeLogging('ERROR');
  const { outcome, uiLink } = await runFromCommandLine({
    input,
    workflowId,
    taskQueue: defaultTaskQueue(),
    note: (line) => {
      if (!json) process.stderr.write(`${line}\n`);
    },
  });
  console.log(json ? JSON.stringify(outcomeJson(outcome)) : outcomeText(outcome, uiLink));
  return outcome.status === 'failed' ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof UsageError) console.error(`client.ts: ${err.message}\n${RUN_USAGE}`);
    else console.error(`client.ts: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);

/**
 * Command-line client.
 *   npx tsx client.ts run "<message>" [options] [--json]          one agent run
 *   npx tsx client.ts chat [--conversation <id>] [options]         interactive conversation
 *   npx tsx client.ts send|history|status|approve|reject|cancel|end ...   conversation commands
 * Exit codes: 0 done, 1 the run or turn failed, 2 bad usage, a refused request or Temporal unreachable.
 */
import { CONVERSATION_OPTION_HELP, CONVERSATION_USAGE, isConversationCommand, parseConversationArgs } from './src/cli/parse-conversation-args';
import { runConversationCommand } from './src/cli/conversation-commands';
import { outcomeJson, outcomeText } from './src/cli/format-outcome';
import { RUN_OPTION_HELP } from './src/cli/option-flags';
import { parseRunArgs, RUN_USAGE, UsageError } from './src/cli/parse-run-args';
import { runFromCommandLine } from './src/cli/run-flow';
import { defaultTaskQueue } from './src/runtime/agent-worker';
import { ConversationError } from './src/runtime/conversations';
import { installRuntimeLogging } from './src/runtime/logging';
import { defaultToolRegistry } from './src/tools';

const HELP = `durable-agents client

${RUN_USAGE}

${RUN_OPTION_HELP}
  --id ID                workflow id (default: agent-<words>-<random>)
  --json                 print exactly one JSON object

${CONVERSATION_USAGE}

  A conversation is one long-lived workflow; send/chat start it when it is not open, and the
  options below apply then.
${CONVERSATION_OPTION_HELP}
  --no-wait              send: queue the message (a Signal) instead of waiting for the answer
  --reason "..."         reject: why; the LLM reads it as the tool's result
  --json                 print JSON (chat: one object per turn)`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    console.log(HELP);
    return command ? 0 : 2;
  }
  const registered = defaultToolRegistry().names();
  if (isConversationCommand(command)) {
    const cmd = parseConversationArgs(command, rest, registered);
    installRuntimeLogging('ERROR');
    return runConversationCommand(cmd, defaultTaskQueue(), {
      stdin: process.stdin,
      stdout: (text) => console.log(text),
      stderr: (line) => console.error(line),
      write: (text, toStderr) => (toStderr ? process.stderr : process.stdout).write(text),
    });
  }
  if (command !== 'run') throw new UsageError(`unknown command "${command}"`);
  const { input, workflowId, json } = parseRunArgs(rest, registered);
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
    if (err instanceof UsageError) console.error(`client.ts: ${err.message}\n${isConversationCommand(process.argv[2] ?? '') ? CONVERSATION_USAGE : RUN_USAGE}`);
    else if (err instanceof ConversationError) console.error(`client.ts: ${err.message}`);
    else console.error(`client.ts: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  },
);

/**
 * `npm run long-conversation [-- --turns N] [--max-prompt-tokens N | --memory N]`: one
 * conversation of 1,000 turns (default) under one id,
 * on a fresh in-memory dev server with Temporal's default limits and a loopback model. Every few
 * hundred turns Temporal suggests continue-as-new; the script shows the conversation carrying on
 * across those runs, its memory intact (the model always sees the previous turn) and its whole
 * transcript still readable. Its memory is by tokens (`maxPromptTokens`, default 2,000: older turns
 * are summarised now and then) or, with `--memory N`, a window of N messages. It prints the time per
 * turn and the largest prompt. A demonstration, not a timed test (`npm run bench` reports it).
 */
import { randomUUID } from 'node:crypto';
import { parseArgs as parse } from 'node:util';
import { startOpenAICompatibleServer } from '../src/testing/openai-compatible-server';
import { createAgentWorker } from '../src/worker/create-agent-worker';
import { readTranscript } from '../src/client/workflow-controls';
import { conversationStatus, endConversation, sendMessage } from '../src/client/conversations';
import { installRuntimeLogging } from '../src/telemetry/logging';
import { connectTemporal } from '../src/connection/temporal-env';
import { clientSettings } from '../src/connection/settings';
import { exampleToolRegistry } from './demo-agents';

/** The command line: `--turns N`, `--max-prompt-tokens N` or `--memory N` (a bare number is the turns, as before). */
function parseArgs(argv: string[]): { turns: number; memory: { maxPromptTokens: number } | { memoryWindow: number } } {
  const { values, positionals } = parse({
    args: argv,
    allowPositionals: true,
    options: { turns: { type: 'string' }, 'max-prompt-tokens': { type: 'string' }, memory: { type: 'string' } },
  });
  const number = (flag: string, raw: string | undefined, fallback: number) => {
    const n = Number(raw ?? fallback);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a whole number >= 1, got ${raw}`);
    return n;
  };
  const turns = number('--turns', values.turns ?? positionals[0], 1000);
  if (values.memory !== undefined) return { turns, memory: { memoryWindow: number('--memory', values.memory, 6) } };
  return { turns, memory: { maxPromptTokens: number('--max-prompt-tokens', values['max-prompt-tokens'], 2000) } };
}

async function main(argv: string[]): Promise<void> {
  const { turns, memory } = parseArgs(argv);
  installRuntimeLogging('ERROR');
  let memoryIntact = true;
  let largestPrompt = 0;
  let summaries = 0;
  // Answers "turn N" with "ack N", and checks that the previous turn is in what it sees.
  const model = await startOpenAICompatibleServer((req) => {
    if (String(req.messages[0]?.content).startsWith('Summarise the conversation')) {
      summaries++;
      return { content: 'The user counted turns; the assistant acknowledged each.' };
    }
    largestPrompt = Math.max(largestPrompt, Math.ceil(JSON.stringify(req.messages).length / 4));
    const user = String([...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '');
    const n = Number(user.replace('turn ', ''));
    if (n > 1 && !req.messages.some((m) => m.content === `ack ${n - 1}`)) memoryIntact = false;
    return { content: `ack ${n}` };
  });
  const temporal = await connectTemporal(
    { port: 0, persistent: false },
    clientSettings({ ...process.env, TEMPORAL_ADDRESS: '' }),
  );
  const taskQueue = `long-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: temporal.nativeConnection,
    taskQueue,
    registry: exampleToolRegistry(),
    model: { baseURL: model.baseURL, apiKey: 'local', model: 'echo', requestTimeoutMs: 10_000, configured: true },
  });
  const id = `long-${randomUUID().slice(0, 8)}`;
  try {
    await worker.runUntil(async () => {
      const started = Date.now();
      let runs = 1;
      for (let n = 1; n <= turns; n++) {
        const result = await sendMessage(temporal.client, id, { message: `turn ${n}` }, { taskQueue, options: memory });
        if (result.content !== `ack ${n}`) throw new Error(`turn ${n} answered ${JSON.stringify(result.content)}`);
        if (n % 100 === 0 || n === turns) {
          const status = await conversationStatus(temporal.client, id);
          if (status.runs !== runs) console.log(`  continued as new: now run ${status.runs}`);
          runs = status.runs;
          console.log(
            `turn ${n}: ${status.messageCount} messages, run ${status.runs}, ${Math.round((Date.now() - started) / n)} ms/turn, largest prompt ${largestPrompt} tokens, ${summaries} summaries`,
          );
        }
      }
      const status = await conversationStatus(temporal.client, id);
      const description = await temporal.client.workflow.getHandle(id).describe();
      const transcript = await readTranscript(temporal.client, id);
      const closed = await endConversation(temporal.client, id);
      console.log('');
      console.log(
        `conversation ${id}: ${closed.turns} turns in ${((Date.now() - started) / 1000).toFixed(1)} s, ${status.runs} workflow runs under one id`,
      );
      console.log(
        `current run: ${description.historyLength} history events; transcript read back across runs: ${transcript.messages.length} messages`,
      );
      console.log(`memory intact at every turn (the previous turn seen): ${memoryIntact ? 'yes' : 'NO'}`);
      console.log(
        `memory: ${'maxPromptTokens' in memory ? `maxPromptTokens ${memory.maxPromptTokens}, ${summaries} summaries` : `a window of ${memory.memoryWindow} messages`}; largest prompt ${largestPrompt} tokens`,
      );
      console.log(
        `LONG_CONVERSATION ${JSON.stringify({ turns, msPerTurn: (Date.now() - started) / turns, largestPrompt, summaries, runs: status.runs, historyLength: Number(description.historyLength) })}`,
      );
      // The transcript holds every turn's question and answer, and the summaries.
      const asked = transcript.messages.filter((m) => m.role === 'user').length;
      if (asked !== turns || !memoryIntact || closed.turns !== turns) process.exitCode = 1;
    });
  } finally {
    await temporal.close();
    await model.close();
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(`long-conversation: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

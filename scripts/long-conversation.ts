/**
 * `npm run long-conversation [-- turns]`: one conversation of 1,000 turns (default) under one id,
 * on a fresh in-memory dev server with Temporal's default limits and a loopback model. Every few
 * hundred turns Temporal suggests continue-as-new; the script shows the conversation carrying on
 * across those runs, its memory intact (the model always sees the previous turn) and its whole
 * transcript still readable. A demonstration, not a timed test.
 */
import { randomUUID } from 'node:crypto';
import { startOpenAICompatibleServer } from '../src/testing/openai-compatible-server';
import { createAgentWorker } from '../src/worker/create-agent-worker';
import { readTranscript } from '../src/client/agent-workflows';
import { conversationStatus, endConversation, sendMessage } from '../src/client/conversations';
import { installRuntimeLogging } from '../src/worker/logging';
import { connectTemporal } from '../src/connection/temporal-env';
import { exampleToolRegistry } from '../src/examples';

async function main(turns: number): Promise<void> {
  if (!Number.isInteger(turns) || turns < 1)
    throw new Error(`the number of turns must be a whole number >= 1, got ${process.argv[2]}`);
  installRuntimeLogging('ERROR');
  let memoryIntact = true;
  // Answers "turn N" with "ack N", and checks that the previous turn is in what it sees.
  const model = await startOpenAICompatibleServer((req) => {
    const user = String([...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '');
    const n = Number(user.replace('turn ', ''));
    if (n > 1 && !req.messages.some((m) => m.content === `ack ${n - 1}`)) memoryIntact = false;
    return { content: `ack ${n}` };
  });
  const temporal = await connectTemporal({ port: 0, persistent: false }, { ...process.env, TEMPORAL_ADDRESS: '' });
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
        const result = await sendMessage(
          temporal.client,
          id,
          { message: `turn ${n}` },
          { taskQueue, options: { memoryWindow: 6 } },
        );
        if (result.content !== `ack ${n}`) throw new Error(`turn ${n} answered ${JSON.stringify(result.content)}`);
        if (n % 100 === 0 || n === turns) {
          const status = await conversationStatus(temporal.client, id);
          if (status.runs !== runs) console.log(`  continued as new: now run ${status.runs}`);
          runs = status.runs;
          console.log(
            `turn ${n}: ${status.messageCount} messages, run ${status.runs}, ${Math.round((Date.now() - started) / n)} ms/turn`,
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
      console.log(`memory window intact at every turn: ${memoryIntact ? 'yes' : 'NO'}`);
      if (transcript.messages.length !== turns * 2 || !memoryIntact || closed.turns !== turns) process.exitCode = 1;
    });
  } finally {
    await temporal.close();
    await model.close();
  }
}

main(Number(process.argv[2] ?? 1000)).catch((err) => {
  console.error(`long-conversation: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

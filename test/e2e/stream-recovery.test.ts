import { randomUUID } from 'node:crypto';
import type { AgentEvent } from '../../src/core/events/agent-events';
import { isTurnEnd, streamEvents } from '../../src/client/event-stream';
import { startAgentRun } from '../../src/client/run-agent';
import { cleanEnv, startTs } from '../helpers/processes';
import { startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

const temporal = useTestTemporal();

const ANSWER = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

it('a subscriber sees no gap and no duplicate when the worker is killed mid-answer: a model_retry, then the new attempt from the start', async () => {
  const t = temporal();
  const model = await startModel(() => ({ content: ANSWER, chunkDelayMs: 100 }));
  const taskQueue = `stream-kill-${randomUUID()}`;
  const env = cleanEnv({
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    AGENT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_API_KEY: 'e2e',
  });
  const first = await startTs(['worker.ts'], env, /Press Ctrl\+C/, 120_000);
  let killed = false;
  let second: Awaited<ReturnType<typeof createTestWorker>> | undefined;
  let secondRunning: Promise<void> | undefined;
  try {
    const handle = await startAgentRun(t.client, { message: 'tell me a long story', tools: [] }, { taskQueue });
    const events: AgentEvent[] = [];
    for await (const e of streamEvents(t.client, handle.workflowId, { after: -1, until: (e) => isTurnEnd(e) })) {
      events.push(e);
      if (!killed && events.filter((x) => x.type === 'text_delta').length >= 3) {
        first.kill('SIGKILL');
        killed = true;
        second = await createTestWorker(t, { baseURL: model.baseURL, taskQueue });
        secondRunning = second.worker.run();
      }
    }
    const result = await handle.result();
    expect(result.content).toBe(ANSWER);
    expect(events.map((e) => e.offset)).toEqual(events.map((_, i) => i));
    const retry = events.findIndex((e) => e.type === 'model_retry');
    expect(events[retry]).toMatchObject({
      type: 'model_retry',
      call: 1,
      attempt: 2,
      error: expect.stringContaining('did not finish'),
    });
    const before = events
      .slice(0, retry)
      .flatMap((e) => (e.type === 'text_delta' ? [e.delta] : []))
      .join('');
    const after = events
      .slice(retry)
      .flatMap((e) => (e.type === 'text_delta' ? [e.delta] : []))
      .join('');
    expect(before.length).toBeGreaterThan(0);
    expect(ANSWER.startsWith(before)).toBe(true);
    expect(after).toBe(ANSWER);

    // Reconnecting with an offset from before the kill gives exactly the same events after it.
    const again: AgentEvent[] = [];
    for await (const e of streamEvents(t.client, handle.workflowId, { after: 2 })) again.push(e);
    expect(again).toEqual(events.slice(3));
  } finally {
    if (second?.worker.getState() === 'RUNNING') second.worker.shutdown();
    await secondRunning;
    if (!killed) first.kill('SIGKILL');
    await first.exited;
  }
}, 120_000);

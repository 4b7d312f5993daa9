import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineAgent } from '../../src/agents/define-agent';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { startHttpApi } from '../helpers/http-api';
import { answer, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/**
 * Bad input over HTTP is the caller's mistake, answered with a 4xx and a sentence, never a 500 or
 * a 503 with a database's words: a fork from a branch that does not exist, NUL bytes in memory
 * ids and names, an AG-UI resume of a thread nobody started.
 */
const temporal = useTestTemporal();

const helper = defineAgent({ name: 'helper', description: 'Answers', instructions: 'Help.', tools: [] });

it('answers bad input with a 4xx that names the mistake', async () => {
  const { client } = temporal();
  const m = await startModel((req: ChatRequest) => answer(`you said: ${lastOf(req, 'user')}`));
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: m.baseURL,
    agents: [helper],
    memory: { dir: mkdtempSync(join(tmpdir(), 'bad-input-memory-')) },
  });
  await worker.runUntil(async () => {
    const api = await startHttpApi({ client, taskQueue });
    const send = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${api.base}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return [res.status, (await res.json().catch(() => ({}))) as { error?: string }] as const;
    };
    try {
      const id = `bad-${randomUUID().slice(0, 8)}`;
      expect((await send('POST', `/conversations/${id}/messages`, { message: 'hello' }))[0]).toBe(200);
      const cases: [string, string, unknown, number, RegExp][] = [
        ['POST', `/conversations/${id}/fork`, { atMessage: 0, into: `f-${id}`, branch: 'nope' }, 400, /branch "nope"/],
        ['POST', `/conversations/${id}/fork`, { atMessage: 0, branch: 'nope' }, 400, /branch|"into"/],
        ['POST', `/conversations/${id}/fork`, { atMessage: 99, into: `g-${id}` }, 400, /message 99/],
        ['GET', '/memory/%00', undefined, 400, /not a fact id/],
        ['GET', '/memory?user=u1&agent=%00', undefined, 400, /agent name/],
        ['GET', '/memory?user=%00', undefined, 400, /user id/],
        ['GET', '/memory?user=u1&limit=0', undefined, 400, /"limit" must be a whole number from 1 to 1000/],
        ['GET', '/memory?user=u1&limit=5000', undefined, 400, /"limit" must be a whole number from 1 to 1000/],
        ['DELETE', '/memory?user=u%00', undefined, 400, /user id/],
        ['POST', '/ag-ui', agUiResume(`nobody-${id}`), 404, /no run or conversation .* exists/],
        // A misspelt or misplaced field is refused, not dropped (the run would go on with the default).
        [
          'POST',
          '/runs',
          { message: 'hi', maxIteration: 3 },
          400,
          /unknown field "maxIteration" \(did you mean "maxIterations"\?\)/,
        ],
        [
          'POST',
          `/conversations/${id}/messages`,
          { message: 'hi', system: 'x' },
          400,
          /a message does not take "system"/,
        ],
        ['POST', `/conversations/${id}/messages`, { mesage: 'hi' }, 400, /did you mean "message"/],
        [
          'POST',
          '/runs',
          { message: 'hi', modelSettings: { model: 42 } },
          400,
          /"modelSettings.model" must be a model name/,
        ],
      ];
      for (const [method, path, body, status, words] of cases) {
        const [got, answerBody] = await send(method, path, body);
        expect([method, path, got, answerBody.error]).toEqual([method, path, status, expect.stringMatching(words)]);
      }
    } finally {
      api.close();
    }
  });
});

/** An AG-UI RunAgentInput that resumes an interrupt. */
function agUiResume(threadId: string) {
  return {
    threadId,
    runId: randomUUID(),
    state: {},
    messages: [],
    tools: [],
    context: [],
    forwardedProps: {},
    resume: [{ interruptId: 'call-1', payload: { approved: true } }],
  };
}

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { AGENT_WORKFLOW_TYPE, CONVERSATION_WORKFLOW_TYPE } from '../../src/contracts/definitions';
import { endConversation, sendMessage } from '../../src/client/conversations';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { testRegistry } from '../helpers/test-tools';

/**
 * State carried across continue-as-new crosses builds: a run continued by the previous release
 * is read by this one. The inputs here are release 0.2.0's, as it wrote them when a run and a
 * conversation continued as new (taken from its recorded histories, test/histories/*-run2.json,
 * and kept apart so re-recording those does not change them); they name no version. Each starts
 * a workflow of this build, which goes on from what it carries.
 */
const temporal = useTestTemporal();
const previous = (name: string) =>
  JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'carries-0.2.0', `${name}.json`), 'utf8'));

it('goes on with a one-shot run from the state release 0.2.0 carried: its messages, counters and tool calls', async () => {
  const input = previous('run');
  expect(input.carryVersion).toBeUndefined();
  // The run was adding up, one `add` call a step; two more calls, then the sum.
  const model = await startModel((req: ChatRequest) => {
    const results = req.messages.filter((m) => m.role === 'tool').length;
    if (results < 6) return call(['add', { a: results, b: 1 }]);
    return answer(`the sum is ${String(req.messages.at(-1)!.content)}`);
  });
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, registry: testRegistry() });
  const handle = await worker.runUntil(async () => {
    const h = await t.client.workflow.start(AGENT_WORKFLOW_TYPE, {
      workflowId: `carried-run-${randomUUID()}`,
      taskQueue,
      args: [input],
    });
    await h.result();
    return h;
  });
  const result = await handle.result();
  expect(result).toMatchObject({ status: 'completed', content: 'the sum is 6' });
  // Counted on from where 0.2.0 stopped: four steps before, three here.
  expect(result.iterations).toBe(input.carry.state.iterations + 3);
  // The model saw what 0.2.0 carried, as it carried it: its instructions, the question, four results.
  const first = model.requests[0].messages;
  expect(first.slice(0, 2)).toEqual([
    { role: 'system', content: 'Be exact.' },
    { role: 'user', content: 'Add up.' },
  ]);
  expect(first.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['1', '2', '3', '4']);
  await model.close();
});

it('goes on with a conversation from the state release 0.2.0 carried, and carries it on in the current version', async () => {
  const input = previous('conversation');
  expect(input.carryVersion).toBeUndefined();
  const model = await startModel((req: ChatRequest) =>
    answer(
      `seen: ${req.messages
        .map((m) => (m.role === 'user' ? String(m.content) : ''))
        .filter(Boolean)
        .join(', ')}`,
    ),
  );
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, registry: testRegistry() });
  const id = `carried-conv-${randomUUID()}`;
  await worker.runUntil(async () => {
    await t.client.workflow.start(CONVERSATION_WORKFLOW_TYPE, { workflowId: id, taskQueue, args: [input] });
    const reply = await sendMessage(t.client, id, { message: 'turn 9' }, { taskQueue });
    // Its memory window (4 messages, 0.2.0's option) holds the carried turn 4 and this one.
    expect(reply).toMatchObject({ status: 'completed', turn: input.carry.turns + 1 });
    expect(lastOf(model.requests.at(-1)!, 'user')).toBe('turn 9');
    expect(model.requests.at(-1)!.messages.some((m) => m.content === 'you said: turn 4')).toBe(true);
    await endConversation(t.client, id);
  });
  await model.close();
});

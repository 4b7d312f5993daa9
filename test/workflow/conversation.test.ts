import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { AgentEvent } from '../../src/core/events/agent-events';
import type { ConversationOptions, TurnInput } from '../../src/core/conversation/conversation-state';
import type { ConversationStatus } from '../../src/core/conversation/conversation-status';
import { decideApproval, readTranscript } from '../../src/client/workflow-controls';
import { ClientError } from '../../src/client/client-error';
import { isTurnEnd, keptEvents, streamEvents } from '../../src/client/event-stream';
import {
  cancelTurn,
  conversationStatus,
  endConversation,
  queueMessage,
  sendMessage,
  startMessage,
} from '../../src/client/conversations';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';
import { queueMessageSignal, sendMessageUpdate } from '../../src/contracts/definitions';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { aborted, bookingLookups, bookingToolProvider, testRegistry, transfers } from '../helpers/test-tools';

const temporal = useTestTemporal();

/** Echoes the last user message, so each request shows what the model saw. */
const echo = (req: ChatRequest) => answer(`you said: ${lastOf(req, 'user')}`);

async function withConversation<T>(
  model: { baseURL: string },
  body: (c: {
    id: string;
    taskQueue: string;
    send: (message: string, tools?: string[]) => ReturnType<typeof sendMessage>;
    status: () => Promise<ConversationStatus>;
  }) => Promise<T>,
  options: ConversationOptions = {},
  workerOptions: { toolProvider?: typeof bookingToolProvider } = {},
): Promise<T> {
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, {
    baseURL: model.baseURL,
    registry: testRegistry(),
    ...workerOptions,
  });
  const id = `conv-${randomUUID()}`;
  return worker.runUntil(
    body({
      id,
      taskQueue,
      send: (message, tools) =>
        sendMessage(t.client, id, tools ? { message, tools } : { message }, { taskQueue, options }),
      status: () => conversationStatus(t.client, id),
    }),
  );
}

async function waitFor<T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 150; i++) {
    // Not found yet: the message that starts the conversation may still be on its way.
    const value = await read().catch((err: unknown) =>
      err instanceof ClientError && err.kind === 'not_found' ? undefined : Promise.reject(err),
    );
    if (value !== undefined && ok(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const roles = (req: ChatRequest) => req.messages.map((m) => `${m.role}:${m.content ?? (m.tool_calls ? 'calls' : '')}`);

describe('conversation memory', () => {
  it('lets the LLM see earlier turns and keeps the whole transcript queryable', async () => {
    const model = await startModel(echo);
    await withConversation(
      model,
      async (c) => {
        const first = await c.send('My name is Ada');
        expect(first).toMatchObject({
          status: 'completed',
          content: 'you said: My name is Ada',
          turn: 1,
          workflowId: c.id,
        });
        const second = await c.send('What is my name?');
        expect(second.turn).toBe(2);
        expect(roles(model.requests[1])).toEqual([
          'system:Be brief.',
          'user:My name is Ada',
          'assistant:you said: My name is Ada',
          'user:What is my name?',
        ]);
        const transcript = await readTranscript(temporal().client, c.id);
        expect(transcript.system).toBe('Be brief.');
        expect(transcript.messages.map((m) => m.content)).toEqual([
          'My name is Ada',
          'you said: My name is Ada',
          'What is my name?',
          'you said: What is my name?',
        ]);
        const status = await c.status();
        expect(status).toMatchObject({ state: 'idle', turns: 2, messageCount: 4, runs: 1, queuedMessages: 0 });
        expect(status.usage.totalTokens).toBeGreaterThan(0);
      },
      { system: 'Be brief.' },
    );
  });

  it('shows the LLM only the window of the last N messages, never splitting a tool call from its results', async () => {
    const model = await startModel((req) => {
      const last = req.messages[req.messages.length - 1];
      if (lastOf(req, 'user') === 'add' && last.role === 'user')
        return call(['add', { a: 1, b: 2 }], ['add', { a: 3, b: 4 }]);
      return echo(req);
    });
    await withConversation(
      model,
      async (c) => {
        await c.send('one');
        await c.send('two');
        await c.send('three');
        // 5 messages so far: the window keeps the last 3, plus the system message.
        expect(roles(model.requests[2])).toEqual(['system:sys', 'user:two', 'assistant:you said: two', 'user:three']);
        const result = await c.send('add');
        expect(result.toolExecutions.map((e) => e.result)).toEqual(['3', '7']);
        // [..., user:add, assistant(2 calls), tool, tool]: the last 3 would start at a tool result, so the call is kept with them.
        const seen = model.requests[model.requests.length - 1].messages;
        expect(seen.map((m) => m.role)).toEqual(['system', 'assistant', 'tool', 'tool']);
        expect((await readTranscript(temporal().client, c.id)).messages).toHaveLength(11);
      },
      { system: 'sys', memoryWindow: 3 },
    );
  });
});

describe('messages in and out', () => {
  it('rejects invalid messages before anything is written', async () => {
    const model = await startModel(echo);
    await withConversation(model, async (c) => {
      await c.send('hello');
      const h = temporal().client.workflow.getHandle(c.id);
      // Straight to the workflow, past the client's own checks: the Update validator must refuse them.
      for (const [bad, why] of [
        [{ message: '' }, /non-empty/],
        [{ message: 'x'.repeat(100_001) }, /longer than/],
        [{ message: 'hi', tools: ['nope'] }, /unknown tool nope/],
      ] as const) {
        const err = await h.executeUpdate(sendMessageUpdate, { args: [bad as TurnInput] }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
        expect(String((err as WorkflowUpdateFailedError).cause?.message)).toMatch(why);
      }
      await expect(c.send('   ')).rejects.toThrow(ClientError);
      expect((await readTranscript(temporal().client, c.id)).messages).toHaveLength(2);
      expect(model.requests).toHaveLength(1);
      // A turn may use a subset of the conversation's tools.
      await c.send('only add', ['add']);
      expect(model.requests[1].tools?.map((t) => t.function.name)).toEqual(['add']);
    });
  });

  it('accepts fire-and-forget messages as a Signal and answers them in order', async () => {
    const model = await startModel(echo);
    const t = temporal();
    const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL, registry: testRegistry() });
    const id = `conv-${randomUUID()}`;
    await worker.runUntil(async () => {
      await queueMessage(t.client, id, { message: 'first' }, { taskQueue });
      await queueMessage(t.client, id, { message: 'second' }, { taskQueue });
      await t.client.workflow.getHandle(id).signal(queueMessageSignal, { message: 'x', tools: ['nope'] });
      const status = await waitFor(
        () => conversationStatus(t.client, id),
        (s) => s.turns === 2 && s.rejectedMessages.count === 1,
        'two turns',
      );
      expect(status.rejectedMessages.lastError).toMatch(/unknown tool nope/);
      expect((await readTranscript(t.client, id)).messages.map((m) => m.content)).toEqual([
        'first',
        'you said: first',
        'second',
        'you said: second',
      ]);
    });
  });

  it('closes on end, and after the idle timeout', async () => {
    const model = await startModel(echo);
    await withConversation(model, async (c) => {
      await c.send('hello');
      const result = await endConversation(temporal().client, c.id);
      expect(result).toMatchObject({ conversationId: c.id, reason: 'ended', turns: 1, messageCount: 2, runs: 1 });
      expect((await c.status()).state).toBe('closed');
    });
    await withConversation(
      model,
      async (c) => {
        await c.send('hello');
        const result = await temporal().client.workflow.getHandle(c.id).result();
        expect(result).toMatchObject({ reason: 'idle_timeout', turns: 1 });
      },
      { idleTimeout: '1s' },
    );
  });
});

describe('human approval', () => {
  const model = () =>
    startModel((req) => {
      const last = req.messages[req.messages.length - 1];
      if (last.role === 'user') return call(['transfer', { to: 'bob', amount: 5 }]);
      return answer(`tool said: ${last.content}`);
    });

  it('pauses the turn until a person approves, then runs the tool', async () => {
    const m = await model();
    transfers.length = 0;
    await withConversation(m, async (c) => {
      const t = temporal();
      const pending = c.send('pay bob');
      const status = await waitFor(c.status, (s) => s.state === 'awaiting_approval', 'an approval request');
      expect(status.pendingApprovals).toEqual([
        expect.objectContaining({
          name: 'transfer',
          arguments: { to: 'bob', amount: 5 },
          summary: 'transfer(to="bob", amount=5)',
        }),
      ]);
      const callId = status.pendingApprovals[0].callId;
      // The Temporal UI shows it as the workflow's current details.
      const metadata = await t.client.workflow
        .getHandle(c.id)
        .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      expect(metadata.currentDetails).toContain(`npx durable-agents approve|reject ${c.id} <callId>`);
      expect(metadata.currentDetails).toContain(callId);
      await expect(decideApproval(t.client, c.id, { callId: 'wrong', approve: true })).rejects.toThrow(
        /no tool call "wrong" is awaiting approval/,
      );
      expect(transfers).toEqual([]);
      expect(await decideApproval(t.client, c.id, { callId, approve: true })).toEqual({
        callId,
        approved: true,
        stillPending: 0,
      });
      const result = await pending;
      expect(result.status).toBe('completed');
      expect(result.toolExecutions[0]).toMatchObject({
        name: 'transfer',
        approval: 'approved',
        error: false,
        result: 'sent 5 to bob',
      });
      expect(transfers).toEqual([{ to: 'bob', amount: 5 }]);
    });
  });

  it('sends a rejection and its reason back to the LLM without running the tool', async () => {
    const m = await model();
    transfers.length = 0;
    await withConversation(m, async (c) => {
      const pending = c.send('pay bob');
      const { pendingApprovals } = await waitFor(c.status, (s) => s.pendingApprovals.length > 0, 'an approval request');
      await decideApproval(temporal().client, c.id, {
        callId: pendingApprovals[0].callId,
        approve: false,
        reason: 'bob was paid yesterday',
      });
      const result = await pending;
      expect(result.toolExecutions[0]).toMatchObject({ approval: 'rejected', error: true });
      expect(result.content).toMatch(/rejected this call to transfer\. Reason: bob was paid yesterday/);
      expect(transfers).toEqual([]);
    });
  });

  it('treats an approval timeout as a rejection, for tools listed per conversation too', async () => {
    const m = await startModel((req) =>
      req.messages[req.messages.length - 1].role === 'user'
        ? call(['add', { a: 1, b: 1 }])
        : answer(String(lastOf(req, 'tool'))),
    );
    await withConversation(
      m,
      async (c) => {
        const result = await c.send('add');
        expect(result.toolExecutions[0]).toMatchObject({ name: 'add', approval: 'rejected' });
        expect(result.content).toMatch(/no decision within the approval timeout/);
      },
      { approvalTools: ['add'], approvalTimeout: '1s' },
    );
  });
});

describe('approval tools added to an open conversation', () => {
  it('gates a tool from the turn that names it on, instead of dropping the option', async () => {
    const m = await startModel((req) => {
      const last = req.messages[req.messages.length - 1];
      return last.role === 'user' ? call(['add', { a: 2, b: 3 }]) : answer(`tool said: ${last.content}`);
    });
    await withConversation(m, async (c) => {
      const t = temporal();
      const start = { taskQueue: c.taskQueue };
      // The conversation is open and `add` runs freely.
      expect((await c.send('add 2 and 3')).toolExecutions[0]).toMatchObject({ name: 'add', result: '5' });
      await expect(sendMessage(t.client, c.id, { message: 'x', approvalTools: ['teleport'] }, start)).rejects.toThrow(
        /unknown tool teleport in "approvalTools"/,
      );
      for (const turn of [{ message: 'again', approvalTools: ['add'] }, { message: 'and again' }]) {
        const pending = sendMessage(t.client, c.id, turn, start);
        const status = await waitFor(c.status, (s) => s.state === 'awaiting_approval', 'an approval request');
        expect(status.pendingApprovals[0]).toMatchObject({ name: 'add' });
        await decideApproval(t.client, c.id, { callId: status.pendingApprovals[0].callId, approve: false });
        expect((await pending).toolExecutions[0]).toMatchObject({ name: 'add', approval: 'rejected' });
      }
    });
  });
});

describe('cancelling a turn', () => {
  it('cancels in-flight tools, ends the turn as cancelled, and keeps the conversation usable', async () => {
    const key = randomUUID();
    const model = await startModel((req) =>
      lastOf(req, 'user') === 'wait' && req.messages[req.messages.length - 1].role === 'user'
        ? call(['slow', { key }])
        : echo(req),
    );
    await withConversation(model, async (c) => {
      const t = temporal();
      await expect(cancelTurn(t.client, c.id)).rejects.toThrow(/no turn is running|no conversation/);
      const started = await startMessage(t.client, c.id, { message: 'wait' }, { taskQueue: c.taskQueue });
      await waitFor(c.status, (s) => s.state === 'running_tools', 'the slow tool');
      expect(await cancelTurn(t.client, c.id)).toEqual({ turn: 1 });
      const result = await started.result();
      expect(result).toMatchObject({ status: 'cancelled', turn: 1, content: null });
      // Subscribers see the cancelled call end, before the turn does.
      const events: AgentEvent[] = [];
      for await (const e of streamEvents(t.client, c.id, { after: -1, until: isTurnEnd })) events.push(e);
      const ends = events.filter((e) => e.type === 'tool_call_finished' || isTurnEnd(e)).map((e) => e.type);
      expect(ends).toEqual(['tool_call_finished', 'turn_completed']);
      expect(events.find((e) => e.type === 'tool_call_finished')).toMatchObject({
        name: 'slow',
        result: 'cancelled',
        error: true,
      });
      await waitFor(async () => aborted[key], Boolean, 'the tool to see the cancellation');
      const next = await c.send('still there?');
      expect(next).toMatchObject({ status: 'completed', turn: 2 });
      // The cancelled call got a result, so the next request is valid for the LLM API.
      const toolMessage = model.requests[model.requests.length - 1].messages.find((m) => m.role === 'tool');
      expect(toolMessage?.content).toMatch(/cancelled this turn/);
    });
  });
});

describe('limits and failures per turn', () => {
  it('ends a turn at its time limit and keeps the conversation usable', async () => {
    const key = randomUUID();
    const model = await startModel((req) =>
      lastOf(req, 'user') === 'wait' && req.messages[req.messages.length - 1].role === 'user'
        ? call(['slow', { key }])
        : echo(req),
    );
    await withConversation(
      model,
      async (c) => {
        expect(await c.send('wait')).toMatchObject({
          status: 'time_limit',
          turn: 1,
          content: 'Agent stopped due to iteration limit or time limit.',
        });
        expect(await c.send('next')).toMatchObject({ status: 'completed', turn: 2, content: 'you said: next' });
        expect(model.requests[1].messages.find((m) => m.role === 'tool')?.content).toMatch(/time limit/);
      },
      { maxExecutionTime: '1s' },
    );
  });

  it('fails only the turn whose model call fails for good', async () => {
    const model = await startModel((req) =>
      lastOf(req, 'user') === 'fail'
        ? {
            http: {
              status: 401,
              body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } },
            },
          }
        : echo(req),
    );
    await withConversation(model, async (c) => {
      expect(await c.send('fail')).toMatchObject({
        status: 'failed',
        turn: 1,
        errorType: 'ModelCall.Auth',
        error: expect.stringMatching(/OPENAI_API_KEY/),
      });
      expect(await c.send('hello')).toMatchObject({ status: 'completed', turn: 2, content: 'you said: hello' });
      expect((await c.status()).state).toBe('idle');
    });
  });
});

describe('dynamic tools', () => {
  it('offers a tool only when the provider picks it, and passes the conversation id to it', async () => {
    bookingLookups.length = 0;
    const model = await startModel((req) => {
      const last = req.messages[req.messages.length - 1];
      if (last.role === 'user' && req.tools?.some((t) => t.function.name === 'get_booking_details'))
        return call(['get_booking_details', { bookingNumber: 'B-12345' }]);
      return answer(last.role === 'tool' ? `found: ${last.content}` : 'no booking tools here');
    });
    await withConversation(
      model,
      async (c) => {
        await c.send('hello');
        expect(model.requests[0].tools?.map((t) => t.function.name)).not.toContain('get_booking_details');
        const result = await c.send('Cancel my booking B-12345');
        expect(
          model.requests[1].tools?.find((t) => t.function.name === 'get_booking_details')?.function.parameters,
        ).toEqual({
          type: 'object',
          properties: { bookingNumber: { type: 'string', description: 'Booking number in B-12345 format' } },
          required: ['bookingNumber'],
        });
        expect(result.toolExecutions[0]).toMatchObject({
          name: 'get_booking_details',
          error: false,
          value: { customer: 'Ada Lovelace' },
        });
        expect(bookingLookups).toEqual([{ bookingNumber: 'B-12345', conversationId: c.id }]);
      },
      {},
      { toolProvider: bookingToolProvider },
    );
  });
});

it('answers a message sent twice, by its id, once: a retried Update, and an Update after the same message was queued as a Signal', async () => {
  const model = await startModel((req) => answer(`you said: ${lastOf(req, 'user')}`));
  const t = temporal();
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: model.baseURL });
  const id = `twice-${randomUUID()}`;
  await worker.runUntil(async () => {
    const first = await sendMessage(t.client, id, { message: 'one', messageId: 'k1' }, { taskQueue });
    const again = await sendMessage(t.client, id, { message: 'one', messageId: 'k1' }, { taskQueue });
    expect(again).toEqual(first);
    // Queued as a Signal (as a client does when no worker accepts the Update in time), then sent as an Update.
    await queueMessage(t.client, id, { message: 'two', messageId: 'k2' }, { taskQueue });
    const second = await sendMessage(t.client, id, { message: 'two', messageId: 'k2' }, { taskQueue });
    expect(second).toMatchObject({ turn: 2, content: 'you said: two' });
    // The other way round: the Update first, then the same message as a Signal (dropped).
    const third = await sendMessage(t.client, id, { message: 'three', messageId: 'k3' }, { taskQueue });
    await queueMessage(t.client, id, { message: 'three', messageId: 'k3' }, { taskQueue });
    expect(third.turn).toBe(3);
    const fourth = await sendMessage(t.client, id, { message: 'four' }, { taskQueue });
    expect(fourth.turn).toBe(4);
    const { messages } = await readTranscript(t.client, id);
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['one', 'two', 'three', 'four']);
    expect(model.requests).toHaveLength(4);
    // Each turn names the message it answers.
    const events = await keptEvents(t.client, id);
    expect(events.filter((e) => e.type === 'turn_started').map((e) => (e as { messageId?: string }).messageId)).toEqual(
      ['k1', 'k2', 'k3', expect.any(String)],
    );
  });
});

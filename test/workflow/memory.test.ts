import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { sendMessage } from '../../src/client/conversations';
import { administerMemory } from '../../src/client/memory';
import { readTranscript } from '../../src/client/workflow-controls';
import { conversationStatusQuery, eventsQuery, transcriptQuery } from '../../src/contracts/definitions';
import { defineAgent } from '../../src/agents/define-agent';
import { createHttpApi } from '../../src/http/http-api';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import type { ChatRequest } from '../../src/testing/chat-request';
import { answer, call, lastOf, startModel, toolResults } from '../helpers/scripted-model';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';
import { postgresProblem, startPostgres, type TestPostgres } from '../helpers/postgres-server';
import { cleanEnv, eventually, runTs } from '../helpers/processes';

/**
 * Memory across conversations in real runs, on both stores: what one conversation of a user
 * remembers, a new conversation of the same user recalls; another user's, or the same user's
 * in another tenant, does not.
 */
jest.setTimeout(120_000);
const temporal = useTestTemporal();

const skip = postgresProblem();
if (skip) console.log(`memory.test: the PostgreSQL half is skipped: ${skip}`);
let postgres: TestPostgres | undefined;
const dir = mkdtempSync(join(tmpdir(), 'durable-agents-memory-'));
afterAll(async () => {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The user's model: "remember: X" is kept with remember; a question is looked up with recall, and answered with what came back. */
function memoryModel(req: ChatRequest) {
  const results = toolResults(req);
  if (results.length) return answer(`tool said: ${results[results.length - 1]}`);
  const said = lastOf(req, 'user');
  const keep = /^remember: (.+)$/.exec(said);
  if (keep) return call(['remember', { text: keep[1] }]);
  return call(['recall', { query: said }]);
}

const stores: [string, () => Promise<{ dir: string } | { url: string }>][] = [
  ['embedded', async () => ({ dir: join(dir, 'embedded') })],
  ...(skip
    ? []
    : ([
        [
          'PostgreSQL',
          async () => {
            postgres = await startPostgres();
            return { url: postgres.url };
          },
        ],
      ] as [string, () => Promise<{ dir: string } | { url: string }>][])),
];

describe.each(stores)('on the %s store', (kind, location) => {
  // Tenants of this case's own: a tenant's budget ledger is a workflow on the task queue of the
  // worker that first met it, and the other case's worker is gone.
  const acme = `acme-${kind}`;
  const globex = `globex-${kind}`;
  it("recalls in a new conversation what the user's last one remembered, never for another user or tenant; memory delete --user leaves nothing to recall", async () => {
    const model = await startModel(memoryModel);
    const { worker, taskQueue } = await createTestWorker(temporal(), {
      baseURL: model.baseURL,
      memory: await location(),
    });
    const client = temporal().client;
    const tools = ['remember', 'recall'];
    const say = (user: string, tenant: string, message: string) =>
      sendMessage(client, `mem-${randomUUID()}`, { message }, { taskQueue, options: { user, tenant, tools } });
    await worker.runUntil(async () => {
      const kept = await say('alice', acme, 'remember: Prefers aisle seats on long flights');
      expect(kept.status).toBe('completed');
      expect(kept.content).toMatch(/"remembered":\{"id":"f_\w+","text":"Prefers aisle seats on long flights"/);

      const later = await say('alice', acme, 'Which seat do I like?');
      expect(later.content).toContain('Prefers aisle seats on long flights');
      const otherUser = await say('bob', acme, 'Which seat do I like?');
      expect(otherUser.content).toBe('tool said: {"facts":[]}');
      const otherTenant = await say('alice', globex, 'Which seat do I like?');
      expect(otherTenant.content).toBe('tool said: {"facts":[]}');

      // A one-shot run of the same user finds it too.
      const run = await runOutcome(
        await startAgentRun(client, { message: 'seat?', user: 'alice', tenant: acme, tools }, { taskQueue }),
      );
      expect(run.content).toContain('Prefers aisle seats on long flights');

      // People's control, from the command line: list, then delete everything of alice's.
      const cli = (...args: string[]) =>
        runTs(
          ['client.ts', 'memory', ...args],
          cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, AGENT_TASK_QUEUE: taskQueue }),
        );
      const listed = await cli('list', '--user', 'alice', '--tenant', acme, '--json');
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout).facts.map((f: { text: string }) => f.text)).toEqual([
        'Prefers aisle seats on long flights',
      ]);
      const deleted = await cli('delete', '--user', 'alice');
      expect(deleted.stdout).toMatch(/^Deleted 1 fact\(s\) and 0 profile\(s\) of user alice in every tenant; recorded/);
      // Its copies: the conversation that remembered it and the one that recalled it took it out;
      // the finished one-shot run that recalled it keeps it in its history.
      expect(deleted.stdout).toContain('\nTaken out of the messages of 2 open run(s) and conversation(s): mem-');
      expect(deleted.stdout).toMatch(/\nStill in the histories of 1 closed workflow\(s\) .*: agent-seat-\w+\.\n$/);
      const gone = await say('alice', acme, 'Which seat do I like?');
      expect(gone.content).toBe('tool said: {"facts":[]}');
      // The deletion is recorded, in the store (export) and in Temporal (the memory-delete workflow).
      const exported = JSON.parse((await cli('export', '--user', 'alice')).stdout);
      expect(exported).toMatchObject({
        facts: [],
        deletions: [{ user: 'alice', facts: 1, by: expect.stringMatching(/^cli/) }],
      });
      const recorded = client.workflow.list({ query: `WorkflowType = 'memoryAdminWorkflow'` });
      const kinds: string[] = [];
      for await (const w of recorded) if (w.taskQueue === taskQueue) kinds.push(w.workflowId.split('-')[1]);
      expect(kinds).toContain('delete');
    });
  });
});

it('takes the user and the built-in memory tools in HTTP bodies (messages and useChat), each tenant’s token for its own users', async () => {
  const model = await startModel(memoryModel);
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    memory: { dir: join(dir, 'http') },
  });
  const tenant = `initech-${randomUUID().slice(0, 6)}`;
  const other = `hooli-${randomUUID().slice(0, 6)}`;
  const [A, B] = ['initech-token-0123456789', 'hooli-token-0123456789'];
  const api = createHttpApi({
    client: temporal().client,
    taskQueue,
    access: { tokens: [A, B], tenants: { [A]: tenant, [B]: other } },
  });
  api.listen(0, '127.0.0.1');
  await once(api, 'listening');
  const base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const post = (token: string, path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const chat = (token: string, text: string) =>
    post(token, '/api/chat', {
      id: `chat-${randomUUID()}`,
      user: 'carol',
      tools: ['recall'],
      messages: [{ id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] }],
    }).then((r) => r.text());
  try {
    await worker.runUntil(async () => {
      const kept = await post(A, `/conversations/mem-${randomUUID()}/messages`, {
        message: 'remember: Likes window seats',
        user: 'carol',
        tools: ['remember', 'recall'],
      });
      expect(await kept.json()).toMatchObject({
        status: 'completed',
        content: expect.stringContaining('"remembered"'),
      });
      // A new chat of the same user recalls it; the other tenant's carol is another person.
      expect(await chat(A, 'Which seat do I like?')).toContain('Likes window seats');
      expect(await chat(B, 'Which seat do I like?')).not.toContain('Likes window seats');
      const listed = await fetch(`${base}/memory?user=carol`, { headers: { authorization: `Bearer ${A}` } });
      expect((await listed.json()).facts).toMatchObject([{ text: 'Likes window seats', tenant, user: 'carol' }]);
      // A bad user is a 400 that says what a user id is.
      const bad = await post(A, `/conversations/mem-${randomUUID()}/messages`, { message: 'hi', user: 'no spaces' });
      expect([bad.status, (await bad.json()).error]).toEqual([400, expect.stringMatching(/must be a user id/)]);
    });
  } finally {
    api.close();
  }
});

it('warns when other workers poll the queue of a worker whose memory is embedded (each would keep its own)', async () => {
  const model = await startModel(memoryModel);
  const memoryDir = join(dir, 'shared');
  mkdirSync(memoryDir, { recursive: true });
  const warnings: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  const spy = jest
    .spyOn(process.stderr, 'write')
    .mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      if (String(chunk).includes('embedded store')) warnings.push(String(chunk));
      else return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
      return true;
    });
  try {
    const first = await createTestWorker(temporal(), { baseURL: model.baseURL, memory: { dir: memoryDir } });
    // Another worker of the queue, elsewhere: a poller the server lists (a worker in this process
    // could not share the queue; the SDK allows one per queue and process).
    const { client } = temporal();
    const elsewhere = client.connection
      .withDeadline(Date.now() + 9_000, () =>
        client.workflowService.pollWorkflowTaskQueue({
          namespace: client.options.namespace,
          taskQueue: { name: first.taskQueue },
          identity: 'worker-2@elsewhere',
        }),
      )
      .catch(() => undefined);
    // Until the embedded worker has seen the other poller and said so (its check runs every few seconds).
    await first.worker.runUntil(async () => {
      const deadline = Date.now() + 20_000;
      while (warnings.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    });
    await elsewhere;
    // The embedded one says so, naming the other and the fix.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('worker-2@elsewhere');
    expect(warnings[0]).toMatch(
      new RegExp(
        `embedded store \\(PGlite in .*shared\\).*1 other worker\\(s\\) poll task queue "${first.taskQueue}".*AGENT_MEMORY_URL=postgres://`,
      ),
    );
  } finally {
    spy.mockRestore();
  }
});

it('a run without a user is told, as a tool error it can act on, that memory is per user', async () => {
  const model = await startModel(memoryModel);
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    memory: { dir: join(dir, 'no-user') },
  });
  const outcome = await worker.runUntil(async () =>
    runOutcome(await startAgentRun(temporal().client, { message: 'remember: x', tools: ['remember'] }, { taskQueue })),
  );
  expect(outcome.status).toBe('completed');
  expect(outcome.content).toMatch(/memory is kept per user and this run has none.*--user/);
});

it('an agent with memory recalls at the start of a turn (after the message, outside the cached prefix) and keeps, updates and retires facts at its end', async () => {
  const extractions: ChatRequest[] = [];
  const model = await startModel((req) => {
    const system = String(req.messages[0]?.content ?? '');
    if (system.startsWith('You keep the long-term memory')) {
      extractions.push(req);
      const asked = String(req.messages[1].content);
      if (asked.includes('User: I live in Lyon'))
        return answer(JSON.stringify({ add: [{ text: 'Lives in Lyon' }, { text: 'Prefers aisle seats' }] }));
      const lyon = /\[(f_\w+)\] Lives in Lyon/.exec(asked)?.[1];
      const aisle = /\[(f_\w+)\] Prefers aisle seats/.exec(asked)?.[1];
      if (asked.includes('User: I moved to Paris') && lyon && aisle)
        return answer(`Sure: {"add":[],"update":[{"id":"${lyon}","text":"Lives in Paris"}],"retire":["${aisle}"]}`);
      return answer('{"add":[],"update":[],"retire":[]}');
    }
    const memory = req.messages.find((m) => m.role === 'user' && String(m.content).startsWith('<memory>'));
    return answer(memory ? `I remember: ${String(memory.content)}` : 'Noted.');
  });
  const concierge = defineAgent({
    name: 'concierge',
    instructions: 'You book travel.',
    tools: [],
    memory: { recall: true, extract: true },
  });
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    agents: [concierge],
    memory: { dir: join(dir, 'automatic') },
  });
  const client = temporal().client;
  const say = (id: string, message: string) =>
    sendMessage(client, id, { message }, { taskQueue, options: { agent: 'concierge', user: 'dana', tenant: 'auto' } });
  await worker.runUntil(async () => {
    const first = await say(`auto-${randomUUID()}`, 'I live in Lyon and I prefer aisle seats.');
    expect(first.content).toBe('Noted.');
    expect(extractions).toHaveLength(1);

    const second = `auto-${randomUUID()}`;
    const booked = await say(second, 'Book me a flight to Rome.');
    expect(booked.content).toMatch(/^I remember: <memory>\nWhat you remember about this user/);
    expect(booked.content).toContain('- Lives in Lyon (');
    expect(booked.content).toContain('- Prefers aisle seats (');
    // The block comes right after the turn's message, after the system message and the message: the
    // prefix the provider caches is the conversation's own.
    const sent = model.requests.filter((r) => !String(r.messages[0].content).startsWith('You keep')).at(-1)!;
    expect(sent.messages.map((m) => m.role)).toEqual(['system', 'user', 'user']);
    expect(sent.messages[1].content).toBe('Book me a flight to Rome.');
    // Not kept in the conversation: the next turn's request has the first turn as it was, without it.
    await say(second, 'Thanks!');
    const next = model.requests.filter((r) => !String(r.messages[0].content).startsWith('You keep')).at(-1)!;
    expect(next.messages.slice(0, 3).map((m) => m.content)).toEqual([
      'You book travel.',
      'Book me a flight to Rome.',
      booked.content,
    ]);
    // The second turn recalls for its own message, after it.
    expect(next.messages.slice(-2).map((m) => String(m.content).slice(0, 8))).toEqual(['Thanks!', '<memory>']);

    await say(`auto-${randomUUID()}`, 'I moved to Paris, and I do not care about seats any more.');
    const after = await say(`auto-${randomUUID()}`, 'Where do I live?');
    expect(after.content).toContain('- Lives in Paris');
    expect(after.content).not.toContain('Lyon');
    expect(after.content).not.toContain('aisle');

    // Over HTTP, a tenant's token reaches its own tenant's users only.
    const api = createHttpApi({
      client,
      taskQueue,
      access: {
        tokens: ['auto-token-0123456789abcdef', 'other-token-0123456789abcdef'],
        tenants: { 'auto-token-0123456789abcdef': 'auto', 'other-token-0123456789abcdef': 'other' },
      },
    });
    api.listen(0, '127.0.0.1');
    await once(api, 'listening');
    const base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    const as = (token: string, path: string, init: RequestInit = {}) =>
      fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${token}` } }).then(async (r) => ({
        status: r.status,
        body: await r.json(),
      }));
    try {
      const own = await as('auto-token-0123456789abcdef', '/memory?user=dana');
      expect(own.status).toBe(200);
      expect(own.body.facts.map((f: { text: string }) => f.text)).toEqual(['Lives in Paris']);
      expect((await as('other-token-0123456789abcdef', '/memory?user=dana&tenant=auto')).body.facts).toEqual([]);
      expect((await as('auto-token-0123456789abcdef', `/memory/${own.body.facts[0].id}?user=dana`)).body.text).toBe(
        'Lives in Paris',
      );
      expect((await as('other-token-0123456789abcdef', '/memory?user=dana', { method: 'DELETE' })).body).toMatchObject({
        facts: 0,
        tenant: 'other',
      });
      expect((await as('auto-token-0123456789abcdef', '/memory?user=dana', { method: 'DELETE' })).body).toMatchObject({
        facts: 1,
        tenant: 'auto',
      });
      const exported = await as('auto-token-0123456789abcdef', '/memory/export?user=dana');
      expect(exported.body).toMatchObject({ facts: [], deletions: [{ facts: 1, by: 'http (tenant auto)' }] });
      expect((await as('auto-token-0123456789abcdef', '/memory', { method: 'DELETE' })).status).toBe(400);
    } finally {
      api.close();
    }
  });
});

it("an agent's profile (working memory) is filled by extraction under its zod schema, shown by recall, and a change the schema refuses is dropped", async () => {
  const model = await startModel((req) => {
    const system = String(req.messages[0]?.content ?? '');
    if (system.startsWith('You keep the long-term memory')) {
      const asked = String(req.messages[1].content);
      if (!asked.includes('"seat"')) return answer('{"add":[]}'); // the schema is in the request
      if (asked.includes('User: Call me Eve')) return answer('{"add":[],"profile":{"name":"Eve","seat":"aisle"}}');
      return answer('{"add":[],"profile":{"seat":"standing"}}'); // not an allowed seat
    }
    const memory = req.messages.find((m) => m.role === 'user' && String(m.content).startsWith('<memory>'));
    return answer(memory ? String(memory.content) : 'Noted.');
  });
  const travel = defineAgent({
    name: 'travel',
    instructions: 'You book travel.',
    tools: [],
    memory: {
      recall: true,
      extract: true,
      profile: z.object({ name: z.string().optional(), seat: z.enum(['aisle', 'window']).optional() }),
    },
  });
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    agents: [travel],
    memory: { dir: join(dir, 'profile') },
  });
  const say = (message: string) =>
    sendMessage(
      temporal().client,
      `profile-${randomUUID()}`,
      { message },
      { taskQueue, options: { agent: 'travel', user: 'eve' } },
    );
  await worker.runUntil(async () => {
    await say('Call me Eve; I like aisle seats.');
    expect((await say('Anything on file?')).content).toContain('Profile: {"name":"Eve","seat":"aisle"}');
    await say('I would rather stand.');
    expect((await say('And now?')).content).toContain('Profile: {"name":"Eve","seat":"aisle"}');
  });
});

it("memory delete reaches the conversations holding copies: the remember call, recall results and the summary that quoted the fact are taken out or marked before the model's next request", async () => {
  const FACT = 'Prefers aisle seats on long flights';
  const isSummary = (req: ChatRequest) =>
    String(req.messages[0]?.content ?? '').startsWith('Summarise the conversation');
  const model = await startModel((req) => {
    // The summariser quotes what it summarises, as summaries of remembered facts do.
    if (isSummary(req))
      return answer(
        String(req.messages[0].content).includes(FACT) ? `The user asked me to remember: ${FACT}.` : 'Small talk.',
      );
    return memoryModel(req);
  });
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    memory: { dir: join(dir, 'copies') },
  });
  const client = temporal().client;
  const id = `mem-copies-${randomUUID()}`;
  const other = `mem-copies-${randomUUID()}`;
  const options = { user: 'carol', tools: ['remember', 'recall'], maxPromptTokens: 1000 };
  await worker.runUntil(async () => {
    expect((await sendMessage(client, id, { message: `remember: ${FACT}` }, { taskQueue, options })).status).toBe(
      'completed',
    );
    // Another conversation of hers recalls it: its recall result is a copy too.
    const recalled = await sendMessage(client, other, { message: 'Which seat do I like?' }, { taskQueue, options });
    expect(recalled.content).toContain(FACT);
    // Long messages until the first conversation is summarised (the summary quoting the fact).
    for (let turn = 1; !model.requests.some(isSummary); turn++) {
      expect(turn).toBeLessThan(10);
      await sendMessage(client, id, { message: `${turn}: ${'lorem ipsum '.repeat(120)}` }, { taskQueue, options });
    }
    // What clients read of the conversations (events, transcript, status) quotes it before the deletion...
    const readable = async (wf: string) => {
      const handle = client.workflow.getHandle(wf);
      return JSON.stringify([
        await handle.query(eventsQuery, { after: -1 }),
        await handle.query(transcriptQuery),
        await handle.query(conversationStatusQuery),
      ]);
    };
    for (const wf of [id, other]) expect(await readable(wf)).toContain('aisle seats');
    // How often each history holds the fact's words: the deletion must add none.
    const copiesIn = async (wf: string) =>
      JSON.stringify(await client.workflow.getHandle(wf).fetchHistory()).split('aisle seats').length - 1;
    const before = await Promise.all([id, other].map(copiesIn));
    const { deletion } = await administerMemory(
      client,
      { op: 'delete', filter: { user: 'carol' }, by: 'test' },
      { taskQueue },
    );
    expect(deletion).toMatchObject({ facts: 1, copies: { told: [id, other].sort(), closed: [] } });
    const asked = model.requests.length;
    await sendMessage(client, id, { message: 'And what now?' }, { taskQueue, options });
    await sendMessage(client, other, { message: 'And now?' }, { taskQueue, options });
    const after = model.requests.slice(asked);
    expect(after.length).toBeGreaterThanOrEqual(2);
    for (const req of after) expect(JSON.stringify(req.messages)).not.toContain('aisle seats');
    // ...and not after.
    for (const wf of [id, other]) expect(await readable(wf)).not.toContain('aisle seats');
    // The workflows were told by fingerprint: their histories hold no more copies than before.
    expect(await Promise.all([id, other].map(copiesIn))).toEqual(before);
    // The summary the model reads says it drew on facts deleted since.
    const summary = after[0].messages.find((m) => m.role === 'system' && String(m.content).includes('remember:'));
    expect(String(summary?.content)).toMatch(
      /^Summary of the earlier conversation \(messages 0-\d+\):\nThe user asked me to remember: \[forgotten\]\.\n\n\(Some facts about the user that this summary drew on were deleted at their request on \d{4}-\d\d-\d\d; do not rely on what it says of them\.\)$/,
    );
    // The deletion's record names them, in the export.
    const exported = await administerMemory(client, { op: 'export', filter: { user: 'carol' } }, { taskQueue });
    expect(exported.export.deletions[0].copies).toEqual({ told: [id, other].sort(), closed: [] });
  });
});

it('the forget tool drops the facts the model found with recall, for good', async () => {
  const model = await startModel((req) => {
    const said = lastOf(req, 'user');
    const forget = /^forget: (.+)$/.exec(said);
    if (!forget) return memoryModel(req);
    const turn = req.messages.map((m) => m.role).lastIndexOf('user');
    const since = req.messages.slice(turn + 1).filter((m) => m.role === 'tool');
    if (since.length === 0) return call(['recall', { query: forget[1] }]);
    if (since.length === 1) {
      // The facts recall found that are about what the user asked to forget.
      const found: { id: string; text: string }[] = JSON.parse(String(since[0].content)).facts;
      return call(['forget', { ids: found.filter((f) => f.text.includes(forget[1])).map((f) => f.id) }]);
    }
    return answer(`tool said: ${String(since[1].content)}`);
  });
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    memory: { dir: join(dir, 'forget') },
  });
  const client = temporal().client;
  const tools = ['remember', 'recall', 'forget'];
  const ask = async (message: string) =>
    runOutcome(await startAgentRun(client, { message, user: 'dave', tools }, { taskQueue }));
  await worker.runUntil(async () => {
    await ask('remember: Has a dog named Rex');
    await ask('remember: Works night shifts at the hospital');
    const forgot = await ask('forget: dog');
    expect(forgot.content).toMatch(/^tool said: \{"forgotten":\["f_\w+"\]\}$/);
    const left = await administerMemory(client, { op: 'list', filter: { user: 'dave' } }, { taskQueue });
    expect(left.facts.map((f) => f.text)).toEqual(['Works night shifts at the hospital']);
  });
});

it('memory delete --purge removes the closed runs that held copies, with what they kept in the payload store', async () => {
  // A fact of this test's own, in a run whose input is large enough for the payload store (64 KiB).
  const FACT = `Keeps a spare key under the mat ${randomUUID().slice(0, 8)}`;
  // A user of this test's own: a purge takes every closed read of the user's memory, and other
  // test files read theirs on the same server.
  const USER = `erin-${randomUUID().slice(0, 8)}`;
  // The suite's payload store holds every test's large payloads: only those written since this
  // test began are read (a payload with the fact is written after it).
  const since = Date.now() - 1000;
  const holding = () =>
    readdirSync(process.env.AGENT_PAYLOAD_STORE!, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && statSync(join(e.parentPath, e.name)).mtimeMs >= since)
      .filter((e) => readFileSync(join(e.parentPath, e.name)).includes(FACT))
      .map((e) => e.name);
  const model = await startModel(memoryModel);
  const { worker, taskQueue } = await createTestWorker(temporal(), {
    baseURL: model.baseURL,
    memory: { dir: join(dir, 'purge') },
  });
  const client = temporal().client;
  await worker.runUntil(async () => {
    const input = {
      message: `remember: ${FACT}`,
      system: `Be brief. ${'x'.repeat(70_000)}`,
      user: USER,
      tools: ['remember'],
    };
    const handle = await startAgentRun(client, input, { taskQueue });
    expect((await runOutcome(handle)).status).toBe('completed');
    expect(holding().length).toBeGreaterThan(0);
    // An open conversation that remembered it, read by a client: the transcript the query
    // answered (large: it goes to the payload store) quotes the fact, in no history.
    const conversation = `mem-purge-${randomUUID()}`;
    const { message: _message, ...options } = input;
    await sendMessage(client, conversation, { message: `remember: ${FACT} (again)` }, { taskQueue, options });
    const before = holding().length;
    expect(JSON.stringify(await readTranscript(client, conversation))).toContain(FACT);
    expect(holding().length).toBeGreaterThan(before);

    const cli = (...args: string[]) =>
      runTs(
        ['client.ts', 'memory', ...args],
        cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, AGENT_TASK_QUEUE: taskQueue }),
      );
    // A read of erin's memory: its result, in its history, lists the fact.
    const listed = await cli('list', '--user', USER, '--json');
    expect(listed.stdout).toContain(FACT);
    // And a read of the fact by its id, which names no user: what it showed was erin's.
    const factId = (JSON.parse(listed.stdout) as { facts: Array<{ id: string; text: string }> }).facts.find((f) =>
      f.text.includes(FACT),
    )!.id;
    expect((await cli('show', factId, '--json')).stdout).toContain(FACT);
    const reads = async () => {
      const found: string[] = [];
      for await (const w of client.workflow.list({ query: `WorkflowType = 'memoryAdminWorkflow'` }))
        if (w.taskQueue === taskQueue && /^memory-(list|show)-/.test(w.workflowId)) found.push(w.workflowId);
      return found.sort();
    };
    let erins: string[] = [];
    expect(await eventually(async () => (erins = await reads()).length === 2)).toBe(true);
    // Another user's fact read by its id: it showed nothing of erin's, so it stays.
    const other = `${USER}-b`;
    await sendMessage(
      client,
      `mem-other-${randomUUID()}`,
      { message: 'remember: Prefers tea' },
      { taskQueue, options: { ...options, system: 'Be brief.', user: other } },
    );
    const theirs = JSON.parse((await cli('list', '--user', other, '--json')).stdout) as {
      facts: Array<{ id: string }>;
    };
    expect((await cli('show', theirs.facts[0].id, '--json')).code).toBe(0);
    expect(await eventually(async () => (await reads()).length === 4)).toBe(true);
    const refused = await cli('export', '--user', USER, '--purge');
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('--purge is for memory delete') });
    const deleted = await cli('delete', '--user', USER, '--purge', '--json');
    expect(deleted.code).toBe(0);
    const copies = JSON.parse(deleted.stdout).copies;
    expect({ ...copies, purged: [...copies.purged].sort() }).toEqual({
      told: [conversation],
      closed: [handle.workflowId],
      // erin's reads and the run; not the other user's reads, nor other tests' (running meanwhile).
      purged: [handle.workflowId, ...erins].sort(),
      payloads: expect.any(Number),
    });
    // The open conversation goes on: what its history refers to in the payload store stayed.
    const next = await sendMessage(client, conversation, { message: 'And now?' }, { taskQueue, options });
    expect(next.status).toBe('completed');
    expect(JSON.parse(deleted.stdout).copies.payloads).toBeGreaterThan(0);
    // Nothing of the fact is left in the payload store.
    expect(holding()).toEqual([]);
  });
});

import { randomUUID } from 'node:crypto';
import type { ChatRequest, OpenAICompatibleServer } from '../../src/testing/openai-compatible-server';
import { cleanEnv, runTs, startInteractive, startTs } from '../helpers/processes';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';

/** Conversation commands of client.ts, and `npm run serve`, as separate processes against a real worker. */

/** Failed attempts so far, per message that fails twice before it is answered. */
const failures = new Map<string, number>();

/** The chat test's question is answered slowly, so the chat's progress display has a model call to show. */
async function model(req: ChatRequest) {
  if (lastOf(req, 'user') === 'add 20 and 22') await new Promise((r) => setTimeout(r, 800));
  const last = req.messages[req.messages.length - 1];
  const user = lastOf(req, 'user');
  if (user.startsWith('flaky') && last.role === 'user' && (failures.get(user) ?? 0) < 2) {
    failures.set(user, (failures.get(user) ?? 0) + 1);
    return { http: { status: 503, body: { error: { message: 'overloaded', type: 'server_error' } } } };
  }
  if (/^length of (\w+)$/.test(user) && last.role === 'user')
    return call(['stringLength', { s: /^length of (\w+)$/.exec(user)![1] }]);
  if (/^add (\d+) and (\d+)$/.test(user) && last.role === 'user') {
    const [, a, b] = /^add (\d+) and (\d+)$/.exec(user)!;
    return call(['add', { a: Number(a), b: Number(b) }]);
  }
  if (last.role === 'tool') return answer(`the result is ${last.content}`);
  if (user === 'What is my name?')
    return answer(req.messages.some((m) => m.content === 'My name is Ada') ? 'Your name is Ada.' : 'I do not know.');
  return answer(`you said: ${user}`);
}

describe('client.ts conversation commands', () => {
  let llm: OpenAICompatibleServer;
  let worker: Awaited<ReturnType<typeof startTs>>;
  let env: NodeJS.ProcessEnv;
  const client = (...args: string[]) => runTs(['client.ts', ...args], env);

  beforeAll(async () => {
    llm = await startModel(model);
    env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: `e2e-conv-${randomUUID()}`,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'e2e',
      AGENT_MODEL: 'scripted',
    });
    worker = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
  });
  afterAll(async () => {
    worker?.kill('SIGINT');
    await worker?.exited;
    await llm?.close();
  });

  it('send, history, status and end a conversation, with --json', async () => {
    const id = `cli-${randomUUID()}`;
    const first = await client('send', id, 'My name is Ada', '--json', '--system', 'Be brief.');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      conversationId: id,
      turn: 1,
      status: 'completed',
      content: 'you said: My name is Ada',
    });

    const second = await client('send', id, 'What is my name?');
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/^Your name is Ada\./);

    const history = await client('history', id);
    expect(history.stdout.trim().split('\n')).toEqual([
      // Which definition answered: without a named agent, its instructions, model and tools.
      expect.stringMatching(/^\(agent version av-[0-9a-f]{16}\)$/),
      'system: Be brief.',
      'user: My name is Ada',
      'assistant: you said: My name is Ada',
      'user: What is my name?',
      'assistant: Your name is Ada.',
    ]);
    expect(JSON.parse((await client('history', id, '--json')).stdout).messages).toHaveLength(4);

    const status = await client('status', id, '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({ conversationId: id, state: 'idle', turns: 2, messageCount: 4 });
    expect((await client('status', id)).stdout).toMatch(new RegExp(`Conversation ${id}: idle\\n  2 turns, 4 messages`));

    const cancel = await client('cancel', id);
    expect(cancel.code).toBe(2);
    expect(cancel.stderr).toMatch(/no turn is running/);

    const ended = await client('end', id, '--json');
    expect(JSON.parse(ended.stdout)).toMatchObject({ conversationId: id, reason: 'ended', turns: 2 });
    expect(JSON.parse((await client('status', id, '--json')).stdout)).toMatchObject({
      state: 'closed',
      closeReason: 'ended',
    });

    const unknown = await client('status', `never-${randomUUID()}`);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no run or conversation "never-.*" exists/);
  });

  it('fork, history --branch and branches --switch: an earlier message answered again, the branch it replaced kept', async () => {
    const id = `cli-fork-${randomUUID()}`;
    expect((await client('send', id, 'My name is Ada')).code).toBe(0);
    expect((await client('send', id, 'What is my name?')).code).toBe(0);
    const forked = await client('fork', id, '0', 'My name is Bo', '--json');
    expect(forked.code).toBe(0);
    expect(JSON.parse(forked.stdout)).toMatchObject({
      conversationId: id,
      branch: 'b1',
      turn: 3,
      content: 'you said: My name is Bo',
    });
    expect((await client('send', id, 'What is my name?')).stdout).toMatch(/^I do not know\./);
    const again = await client('fork', id, '2');
    expect(again.stdout).toContain('I do not know.');
    expect(again.stdout).toMatch(/^Branch b2 of cli-fork-\S+ starts at message 2/);
    const old = await client('history', id, '--branch', 'main');
    expect(old.stdout).toContain('assistant: Your name is Ada.');
    const listed = await client('branches', id, '--switch', 'main');
    expect(listed.stdout.trim().split('\n')).toEqual([
      'Branch main is current again; new messages go on from its end.',
      '* main  4 messages',
      '  b1  4 messages, from main at message 0  "My name is Bo"',
      '  b2  4 messages, from b1 at message 2  "What is my name?"',
    ]);
    const bad = await client('fork', id, '1', 'x');
    expect([bad.code, bad.stderr]).toEqual([
      2,
      expect.stringContaining("message 1 is not a message a person sent (it is the assistant's)"),
    ]);
    const usage = await client('fork', id);
    expect(usage.stderr).toContain('fork expects <id> <message index>');
  });

  it('queues with --no-wait, then approves and rejects from the command line', async () => {
    const id = `cli-${randomUUID()}`;
    const queued = await client('send', id, 'add 2 and 3', '--no-wait', '--needs-approval', 'add', '--json');
    expect(JSON.parse(queued.stdout)).toEqual({ conversationId: id, queued: true });
    let status: { state: string; pendingApprovals: Array<{ callId: string; summary: string }> } | undefined;
    for (let i = 0; i < 60 && status?.state !== 'awaiting_approval'; i++) {
      const r = await client('status', id, '--json');
      status = r.code === 0 ? JSON.parse(r.stdout) : undefined;
    }
    expect(status?.pendingApprovals[0].summary).toBe('add(a=2, b=3)');
    const wrong = await client('approve', id, 'call_nope');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/no tool call "call_nope" is awaiting approval/);
    const approved = await client('approve', id, status!.pendingApprovals[0].callId, '--json');
    expect(JSON.parse(approved.stdout)).toMatchObject({ approved: true });

    const second = await client('send', id, 'add 4 and 4', '--no-wait');
    expect(second.code).toBe(0);
    for (let i = 0; i < 60; i++) {
      status = JSON.parse((await client('status', id, '--json')).stdout);
      if (status?.state === 'awaiting_approval') break;
    }
    const rejected = await client('reject', id, status!.pendingApprovals[0].callId, '--reason', 'not now');
    expect(rejected.stdout).toMatch(/^Rejected call_/);
    let transcript = '';
    for (let i = 0; i < 60 && !transcript.includes('the result is Error'); i++)
      transcript = (await client('history', id)).stdout;
    expect(transcript).toMatch(/assistant: the result is 5/);
    expect(transcript).toMatch(/the result is Error: the user rejected this call to add\. Reason: not now/);
  });

  it('chat: shows progress, retries and every tool call, asks for approval inline, and ends with /end', async () => {
    const id = `chat-${randomUUID()}`;
    const chat = startInteractive(['client.ts', 'chat', '--conversation', id, '--needs-approval', 'add'], env);
    await chat.waitFor(/you> $/);
    chat.write('add 20 and 22');
    await chat.waitFor(/approve add\(a=20, b=22\)\? \[y = approve/);
    chat.write('y');
    await chat.waitFor(/agent> the result is 42/);
    // A tool that starts and ends in a moment is shown too (from the conversation's events), with its result.
    chat.write('length of hello');
    await chat.waitFor(/agent> the result is 5/);
    expect(chat.output()).toMatch(
      /→ stringLength\(s="hello"\)\n {2}← stringLength: 5\n {2}… model call 2\nagent> the result is 5/,
    );
    // While the LLM fails, the chat says so instead of waiting in silence.
    chat.write('flaky question');
    await chat.waitFor(/agent> you said: flaky question/);
    expect(chat.output()).toMatch(
      /! model call 1 failed: the model server at http:\/\/127\.0\.0\.1:\d+\/v1 failed \(HTTP 503: overloaded\) \(attempt 1\/8, retrying/,
    );
    chat.write('My name is Ada');
    await chat.waitFor(/agent> you said: My name is Ada/);
    chat.write('/end');
    expect((await chat.exited).code).toBe(0);
    expect(chat.output()).toMatch(/… model call 1/);
    expect(chat.output()).toMatch(/→ add\(a=20, b=22\)/);
    expect(chat.output()).toMatch(/Conversation ended after 4 turns\./);
  });

  it('run: shows what awaits approval and how to decide; status, history and approve work on the run id', async () => {
    const id = `run-${randomUUID()}`;
    const run = startInteractive(['client.ts', 'run', 'add 2 and 3', '--needs-approval', 'add', '--id', id], env);
    // The reject line comes last, and may come in a later chunk than the approve line.
    await run.waitFor(/reject:  client\.ts reject \S+ call_\S+ --reason/);
    const callId = /awaiting approval: add\(a=2, b=3\)  \[call (\S+)\]/.exec(run.output())![1];
    expect(run.output()).toMatch(/approve: client\.ts approve \S+ call_\S+/);
    expect(run.output()).toContain(`reject:  client.ts reject ${id} ${callId} --reason "..."`);

    const status = await client('status', id);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`Run ${id}: awaiting approval`);
    expect(status.stdout).toContain(`approve: client.ts approve ${id} ${callId}`);
    expect(JSON.parse((await client('status', id, '--json')).stdout)).toMatchObject({
      kind: 'run',
      workflowId: id,
      state: 'awaiting_approval',
      pendingApprovals: [{ callId, name: 'add', arguments: { a: 2, b: 3 }, summary: 'add(a=2, b=3)' }],
    });
    expect((await client('history', id)).stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/^\(agent version av-[0-9a-f]{16}\)$/),
      'user: add 2 and 3',
      `  → ${callId}: add(a=2, b=3)`,
    ]);

    // A run is not a conversation: refused with its own cause, and nothing started under its id.
    for (const args of [
      ['send', id, 'hi'],
      ['end', id],
    ]) {
      const r = await client(...args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`client.ts: "${id}" is a one-shot run, not a conversation`);
    }

    expect((await client('approve', id, callId)).stdout).toBe(`Approved ${callId}\n`);
    const finished = await run.exited;
    expect(finished.code).toBe(0);
    expect(finished.stdout).toMatch(/^the result is 5\n/);
    expect((await client('status', id)).stdout).toMatch(
      new RegExp(`^Run ${id}: completed\n  2 LLM calls of`.replace(' of', '')),
    );
    const again = await client('approve', id, callId);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`The run "${id}" has finished (completed)`);
  });

  it('send: approval tools reach an open conversation; start-only options are reported, not silently dropped', async () => {
    const id = `cli-${randomUUID()}`;
    const free = await client('send', id, 'add 1 and 2', '--json');
    expect(JSON.parse(free.stdout).toolExecutions).toEqual([expect.objectContaining({ name: 'add', result: '3' })]);
    const gated = await client('send', id, 'add 2 and 3', '--needs-approval', 'add', '--max-time', '30s', '--no-wait');
    expect(gated.code).toBe(0);
    expect(gated.stderr).toContain(
      `Note: ${id} was already open, so --max-time (which apply when a conversation starts) did not change it.`,
    );
    let status: { state: string; pendingApprovals: Array<{ callId: string }> } | undefined;
    for (let i = 0; i < 60 && status?.state !== 'awaiting_approval'; i++)
      status = JSON.parse((await client('status', id, '--json')).stdout);
    expect(status?.pendingApprovals).toHaveLength(1);
    await client('reject', id, status!.pendingApprovals[0].callId);
  });

  it("agents: lists the worker's named agents, and run --agent uses one", async () => {
    const listed = await client('agents');
    expect(listed.stdout).toContain(
      "calculator: Arithmetic with tools: the documents' calculator\n  tools: stringLength, add, sqrt, sum, squareRoot; model: scripted",
    );
    expect(listed.stdout).toContain(
      'weather: Looks up the weather of a city and answers as JSON: city, temperature, temperatureUnit\n  tools: search_weather; model: scripted; structured output',
    );
    const run = await client('run', 'add 2 and 40', '--agent', 'calculator', '--json');
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed', content: 'the result is 42' });
    expect(llm.requests.at(-1)!.messages[0]).toEqual({
      role: 'system',
      content: expect.stringMatching(/^You are a careful calculator/),
    });
  });

  it('end: says the same as status about a conversation that is already closed', async () => {
    const id = `cli-${randomUUID()}`;
    await client('send', id, 'hello');
    expect((await client('end', id)).stdout).toMatch(new RegExp(`^Ended ${id} after 1 turn \\(`));
    const again = await client('end', id);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`${id} was already closed (ended after 1 turn)\n`);
    expect((await client('status', id)).stdout).toMatch(
      new RegExp(`^Conversation ${id}: closed \\(ended\\)\n  1 turn, 2 messages`),
    );
    const cancel = await client('cancel', id);
    expect(cancel.code).toBe(2);
    expect(cancel.stderr).toContain(`The conversation "${id}" is closed (ended after 1 turn)`);
  });

  it.each([
    [['send', 'only-an-id'], /send expects <id> "<message>", got "only-an-id"/],
    [['approve', 'x'], /approve expects <id> <callId>/],
    [['chat', 'extra'], /chat expects no arguments/],
    [['send', 'x', 'hi', '--memory', '2'], /--memory must be a whole number >= 3, got "2"/],
    [['send', 'x', 'hi', '--idle-timeout', 'forever'], /--idle-timeout: invalid duration "forever"/],
    [['reject', 'x', 'y', '--bogus'], /Unknown option '--bogus'/],
  ])('rejects %j before connecting', async (args, message) => {
    const r = await runTs(['client.ts', ...args], cleanEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1' }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });
});

describe('npm run serve', () => {
  it('serves the HTTP API with its own worker on PORT', async () => {
    const llm = await startModel(model);
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: `e2e-serve-${randomUUID()}`,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'e2e',
      PORT: '0',
    });
    const serve = await startTs(['serve.ts'], env, /Press Ctrl\+C/);
    try {
      const base = /HTTP API on (http:\/\/127\.0\.0\.1:\d+)/.exec(serve.output())![1];
      expect(serve.output()).toMatch(/No AGENT_HTTP_TOKENS: it listens on loopback only, without authentication\./);
      const res = await fetch(`${base}/assistant-with-tool?message=${encodeURIComponent('add 1 and 2')}`);
      expect(await res.text()).toBe('the result is 3');
      const turn = await fetch(`${base}/conversations/serve-${randomUUID()}/messages`, {
        method: 'POST',
        body: JSON.stringify({ message: 'hi' }),
      });
      expect(await turn.json()).toMatchObject({ turn: 1, content: 'you said: hi' });
    } finally {
      serve.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
      await llm.close();
    }
    const bad = await runTs(['serve.ts'], cleanEnv({ PORT: 'eighty', TEMPORAL_ADDRESS: '127.0.0.1:1' }));
    expect(bad.code).toBe(2); // a server that cannot start: a configuration mistake
    expect(bad.stderr).toMatch(/PORT must be a port number \(0-65535\), got "eighty"/);
  });

  it('with AGENT_HTTP_TOKENS: 401 without a valid token on every route but /healthz; the chat page by ?access_token=, then a cookie; a rate limit', async () => {
    const llm = await startModel(model);
    const token = 'tok-0123456789abcdef';
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: `e2e-serve-${randomUUID()}`,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'e2e',
      PORT: '0',
      HOST: '0.0.0.0',
      AGENT_HTTP_TOKENS: `other-token-000000000, ${token}`,
      AGENT_HTTP_RATE_LIMIT: '8',
      AGENT_HTTP_CORS_ORIGINS: 'https://app.example.com',
    });
    const serve = await startTs(['serve.ts'], env, /Press Ctrl\+C/);
    try {
      expect(serve.output()).toContain('Bearer tokens required (2 configured); GET /healthz is open.');
      expect(serve.output()).not.toContain(token);
      const port = /HTTP API on http:\/\/[^:]+:(\d+)/.exec(serve.output())![1];
      const base = `http://127.0.0.1:${port}`;
      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', temporal: { reachable: true, namespace: 'default' } });
      for (const path of ['/', '/agents', '/assistant-with-tool?message=hi', '/runs/some-id', '/conversations/c-1']) {
        const res = await fetch(`${base}${path}`);
        expect([path, res.status, res.headers.get('www-authenticate')]).toEqual([
          path,
          401,
          'Bearer realm="durable-agents"',
        ]);
        expect(await res.json()).toEqual({
          error: 'missing bearer token (Authorization: Bearer <token>)',
          errorType: 'Http.Unauthorized',
        });
      }
      const wrong = await fetch(`${base}/runs`, {
        method: 'POST',
        headers: { authorization: 'Bearer not-the-token-at-all' },
        body: JSON.stringify({ message: 'hi' }),
      });
      expect(wrong.status).toBe(401);
      expect(((await wrong.json()) as { error: string }).error).toBe('invalid bearer token');
      const ok = await fetch(`${base}/assistant-with-tool?message=${encodeURIComponent('add 1 and 2')}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(await ok.text()).toBe('the result is 3');
      // The chat page: opened with the token in the URL, which becomes a cookie and leaves the URL.
      const opened = await fetch(`${base}/?access_token=${token}`, { redirect: 'manual' });
      expect(opened.status).toBe(303);
      expect(opened.headers.get('location')).toBe('/');
      const cookie = opened.headers.get('set-cookie')!;
      expect(cookie).toMatch(/^durable_agents_token=tok-0123456789abcdef; HttpOnly; SameSite=Strict; Path=\//);
      const page = await fetch(`${base}/`, { headers: { cookie: cookie.split(';')[0] } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<html');
      expect((await fetch(`${base}/?access_token=wrong-token-0000000000`, { redirect: 'manual' })).status).toBe(401);
      // CORS: a listed origin gets its preflight answered; others get no CORS headers.
      const preflight = await fetch(`${base}/runs`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
      const foreign = await fetch(`${base}/healthz`, { headers: { origin: 'https://evil.example.com' } });
      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
      // Rate limit: 8 a minute per token; this token has made 2 requests (the exchange for a cookie is not one).
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++)
        statuses.push((await fetch(`${base}/runs/some-id`, { headers: { authorization: `Bearer ${token}` } })).status);
      expect(statuses).toEqual([404, 404, 404, 404, 404, 404]);
      const limited = await fetch(`${base}/runs/some-id`, { headers: { authorization: `Bearer ${token}` } });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await limited.json()) as { errorType: string }).errorType).toBe('Http.RateLimited');
    } finally {
      serve.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
      await llm.close();
    }
  });

  it('refuses to listen beyond loopback without tokens, and refuses short tokens', async () => {
    const exposed = await runTs(
      ['serve.ts'],
      cleanEnv({ HOST: '0.0.0.0', PORT: '0', TEMPORAL_ADDRESS: '127.0.0.1:1' }),
    );
    expect(exposed.code).toBe(2); // a server that cannot start: a configuration mistake
    expect(exposed.stderr).toContain(
      'serve: HOST=0.0.0.0 would expose the API to the network without authentication: set AGENT_HTTP_TOKENS',
    );
    const short = await runTs(
      ['serve.ts'],
      cleanEnv({ AGENT_HTTP_TOKENS: 'secret', PORT: '0', TEMPORAL_ADDRESS: '127.0.0.1:1' }),
    );
    expect(short.code).toBe(2); // a server that cannot start: a configuration mistake
    expect(short.stderr).toContain('AGENT_HTTP_TOKENS: token 1 is shorter than 16 characters');
    expect(short.stderr).not.toContain('secret');
  });
});

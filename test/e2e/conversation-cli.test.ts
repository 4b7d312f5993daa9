import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ChatRequest, OpenAICompatibleServer } from '../../src/offline-model/openai-compatible-server';
import { cleanEnv, ROOT, runTs, startTs } from '../helpers/processes';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';

/** Conversation commands of client.ts, and `npm run serve`, as separate processes against a real worker. */

/** The chat test's question is answered slowly, so the chat's progress display has a model call to show. */
async function model(req: ChatRequest) {
  if (lastOf(req, 'user') === 'add 20 and 22') await new Promise((r) => setTimeout(r, 800));
  const last = req.messages[req.messages.length - 1];
  const user = lastOf(req, 'user');
  if (/^add (\d+) and (\d+)$/.test(user) && last.role === 'user') {
    const [, a, b] = /^add (\d+) and (\d+)$/.exec(user)!;
    return call(['add', { a: Number(a), b: Number(b) }]);
  }
  if (last.role === 'tool') return answer(`the result is ${last.content}`);
  if (user === 'What is my name?') return answer(req.messages.some((m) => m.content === 'My name is Ada') ? 'Your name is Ada.' : 'I do not know.');
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
    worker?.child.kill('SIGINT');
    await worker?.exited;
    await llm?.close();
  });

  it('send, history, status and end a conversation, with --json', async () => {
    const id = `cli-${randomUUID()}`;
    const first = await client('send', id, 'My name is Ada', '--json', '--system', 'Be brief.');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ conversationId: id, turn: 1, status: 'completed', content: 'you said: My name is Ada' });

    const second = await client('send', id, 'What is my name?');
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/^Your name is Ada\./);

    const history = await client('history', id);
    expect(history.stdout.trim().split('\n')).toEqual(['system: Be brief.', 'user: My name is Ada', 'assistant: you said: My name is Ada', 'user: What is my name?', 'assistant: Your name is Ada.']);
    expect(JSON.parse((await client('history', id, '--json')).stdout).messages).toHaveLength(4);

    const status = await client('status', id, '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({ conversationId: id, state: 'idle', turns: 2, messageCount: 4 });
    expect((await client('status', id)).stdout).toMatch(new RegExp(`Conversation ${id}: idle\\n  2 turns, 4 messages`));

    const cancel = await client('cancel', id);
    expect(cancel.code).toBe(2);
    expect(cancel.stderr).toMatch(/no turn is running/);

    const ended = await client('end', id, '--json');
    expect(JSON.parse(ended.stdout)).toMatchObject({ conversationId: id, reason: 'ended', turns: 2 });
    expect(JSON.parse((await client('status', id, '--json')).stdout)).toMatchObject({ state: 'closed', closeReason: 'ended' });

    const unknown = await client('status', `never-${randomUUID()}`);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no conversation "never-.*" exists/);
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
    for (let i = 0; i < 60 && !transcript.includes('the result is Error'); i++) transcript = (await client('history', id)).stdout;
    expect(transcript).toMatch(/assistant: the result is 5/);
    expect(transcript).toMatch(/the result is Error: the user rejected this call to add\. Reason: not now/);
  });

  it('chat: shows progress, asks for approval inline, and ends with /end', async () => {
    const id = `chat-${randomUUID()}`;
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'tsx'), ['client.ts', 'chat', '--conversation', id, '--needs-approval', 'add'], { cwd: ROOT, env });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const waitFor = async (pattern: RegExp) => {
      for (let i = 0; i < 300 && !pattern.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toMatch(pattern);
    };
    await waitFor(/you> $/);
    child.stdin.write('add 20 and 22\n');
    await waitFor(/approve add\(a=20, b=22\)\? \[y = approve/);
    child.stdin.write('y\n');
    await waitFor(/agent> the result is 42/);
    child.stdin.write('My name is Ada\n');
    await waitFor(/agent> you said: My name is Ada/);
    child.stdin.write('/end\n');
    expect(await exited).toBe(0);
    expect(out).toMatch(/… model call 1/);
    expect(out).toMatch(/→ add\(a=20, b=22\)/);
    expect(out).toMatch(/Conversation ended after 2 turns/);
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
      const base = /HTTP API on (http:\/\/localhost:\d+)/.exec(serve.output())![1];
      const res = await fetch(`${base}/assistant-with-tool?message=${encodeURIComponent('add 1 and 2')}`);
      expect(await res.text()).toBe('the result is 3');
      const turn = await fetch(`${base}/conversations/serve-${randomUUID()}/messages`, { method: 'POST', body: JSON.stringify({ message: 'hi' }) });
      expect(await turn.json()).toMatchObject({ turn: 1, content: 'you said: hi' });
    } finally {
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
      await llm.close();
    }
    const bad = await runTs(['serve.ts'], cleanEnv({ PORT: 'eighty', TEMPORAL_ADDRESS: '127.0.0.1:1' }));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/PORT must be a port number \(0-65535\), got "eighty"/);
  });
});

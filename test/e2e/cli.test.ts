import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/connection/dev-server';
import { cleanEnv, listening, runNpm, runTs, startTs, devServerPort } from '../helpers/processes';
import { call, startScriptedModel, toolResults, type ScriptedModel } from '../helpers/scripted-model';

const ONE_PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** worker.ts, client.ts and the demo as a user runs them: separate processes, real servers. */

const QUESTION = 'What is the square root of the sum of the numbers of letters in the words "hello" and "world"?';

describe('client.ts rejects bad input before starting anything', () => {
  // An unreachable TEMPORAL_ADDRESS: had the client tried to connect, the error would say so.
  const env = cleanEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
  it.each([
    [['run', 'hi', '--bogus'], /Unknown option '--bogus'/],
    [['run', 'hi', '--max-iterations', 'many'], /--max-iterations must be a whole number >= 1, got "many"/],
    [['run', 'hi', '--max-time', 'soon'], /--max-time: invalid duration "soon"/],
    // A bare number used to mean milliseconds and end the run at once.
    [['run', 'hi', '--max-time', '5'], /--max-time: invalid duration "5": add a unit \(ms, s, m, h, d\), e\.g\. 5s/],
    [['run', 'hi', '--wait', '10'], /--wait: invalid duration "10": add a unit/],
    [['run', 'hi', '--on-limit', 'panic'], /--on-limit must be "stop" or "generate"/],
    [['run', 'hi', '--tools', 'add', '--immediate', 'sqrt'], /--immediate names tools missing from --tools: sqrt/],
    [['run'], /missing the message/],
    [['fly'], /unknown command "fly"/],
    [
      ['list', '--status', 'sleeping'],
      /unknown status "sleeping"; one of: thinking, running_tools, awaiting_approval, escalated, waiting, idle, completed/,
    ],
  ])('%j', async (args, message) => {
    const r = await runTs(['client.ts', ...args], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/connect/i);
  });
});

describe('client.ts checks tool names where it knows them', () => {
  it('refuses an unknown tool before connecting when its own worker would run the run', async () => {
    const r = await runTs(['client.ts', 'run', 'hi', '--tools', 'add,teleport'], cleanEnv());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--tools: unknown tool teleport \(available: stringLength, add/);
    expect(r.stderr).not.toMatch(/Temporal/);
  });

  it('leaves the names to the workers of TEMPORAL_ADDRESS (their MCP tools are not known here)', async () => {
    const r = await runTs(
      ['client.ts', 'run', 'hi', '--tools', 'everything__get-sum'],
      cleanEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1' }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/unknown tool/);
    expect(r.stderr).toMatch(/could not connect to Temporal at TEMPORAL_ADDRESS=127\.0\.0\.1:1/);
  });
});

describe('client.ts help and --json errors', () => {
  it('lists exactly the duration units that work', async () => {
    const r = await runTs(['client.ts', 'help', 'run'], cleanEnv());
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Durations are a number with a unit: ms, s, m, h, d (e.g. 500ms, 30s, 1.5m, 2h, 1d).');
    expect(r.stdout).not.toMatch(/\(ms, s, m, h\)/);
  });

  it('prints one JSON object on stdout for every failure under --json', async () => {
    const usage = await runTs(
      ['client.ts', 'run', 'hi', '--json', '--max-time', '5'],
      cleanEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1' }),
    );
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout)).toEqual({
      error: expect.stringContaining('add a unit'),
      errorType: 'Client.Usage',
    });
    const port = await freePort();
    for (const args of [
      ['run', 'hi'],
      ['status', 'some-id'],
      ['send', 'c1', 'hi'],
    ]) {
      const unreachable = await runTs(
        ['client.ts', ...args, '--json'],
        cleanEnv({ TEMPORAL_ADDRESS: `127.0.0.1:${port}` }),
      );
      expect(unreachable.code).toBe(2);
      expect(JSON.parse(unreachable.stdout)).toEqual({
        error: `could not connect to Temporal at TEMPORAL_ADDRESS=127.0.0.1:${port} (namespace default): connection refused (is the server running, and is the port right?)`,
        errorType: 'Client.Unreachable',
      });
    }
  });
});

describe('worker.ts and client.ts against a Temporal server (TEMPORAL_ADDRESS)', () => {
  let model: ScriptedModel;
  let worker: Awaited<ReturnType<typeof startTs>>;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    model = await startScriptedModel([
      (req) =>
        req.messages[0].content === 'please fail'
          ? {
              http: {
                status: 401,
                body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } },
              },
            }
          : call(['stringLength', { s: 'hello' }], ['stringLength', { s: 'world' }]),
      (req) => call(['add', { a: Number(toolResults(req)[0]), b: Number(toolResults(req)[1]) }]),
      (req) => call(['sqrt', { x: Number(toolResults(req)[2]) }]),
      (req) => ({
        content: `approximately ${Number(toolResults(req)[3]).toFixed(3)}, which is the square root of ten`,
        chunkDelayMs: 30,
      }),
    ]);
    env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      TEMPORAL_NAMESPACE: 'default',
      AGENT_TASK_QUEUE: `e2e-${randomUUID()}`,
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'e2e',
      AGENT_MODEL: 'scripted',
    });
    worker = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
  });

  afterAll(async () => {
    worker?.kill('SIGKILL');
    await model?.close();
  });

  it('prints exactly one JSON object with --json, per the CLI contract', async () => {
    const r = await runTs(
      [
        'client.ts',
        'run',
        QUESTION,
        '--json',
        '--id',
        `agent-e2e-${randomUUID()}`,
        '--max-iterations',
        '6',
        '--max-time',
        '1m',
      ],
      env,
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual([
      'workflowId',
      'status',
      'content',
      'toolExecutions',
      'iterations',
      'usage',
      'agentVersion',
    ]);
    expect(out).toMatchObject({
      workflowId: expect.stringMatching(/^agent-e2e-/),
      status: 'completed',
      content: 'approximately 3.162, which is the square root of ten',
      iterations: 4,
    });
    expect(out.toolExecutions[2]).toEqual({
      id: expect.any(String),
      name: 'add',
      arguments: { a: 5, b: 5 },
      result: '10',
      error: false,
      immediate: false,
    });
    expect(Object.keys(out.usage)).toEqual(['promptTokens', 'completionTokens', 'totalTokens', 'byModel']);
    expect(Object.keys(out.usage.byModel)).toEqual(['scripted']);
  });

  it('lists runs by their search attributes: client.ts list --status completed finds the run, with its calls and model', async () => {
    const id = `agent-e2e-list-${randomUUID()}`;
    expect((await runTs(['client.ts', 'run', QUESTION, '--json', '--id', id], env)).code).toBe(0);
    let listed: { workflowId: string }[] = [];
    for (let i = 0; i < 40 && !listed.some((r) => r.workflowId === id); i++) {
      const r = await runTs(['client.ts', 'list', '--status', 'completed', '--limit', '100', '--json'], env);
      expect(r.code).toBe(0);
      listed = JSON.parse(r.stdout);
      if (!listed.some((x) => x.workflowId === id)) await new Promise((res) => setTimeout(res, 250));
    }
    expect(listed.find((r) => r.workflowId === id)).toMatchObject({
      kind: 'run',
      executionStatus: 'COMPLETED',
      agentStatus: 'completed',
      iterations: 4,
      model: 'scripted',
    });
    // (Completed ones: the suite's other files leave many conversations open on this server.)
    const text = await runTs(['client.ts', 'list', '--status', 'completed', '--limit', '100'], env);
    expect(text.stdout).toMatch(new RegExp(`^ID +KIND +STATUS +AGENT +MODEL +CALLS +TOKENS +STARTED \\(UTC\\)$`, 'm'));
    expect(text.stdout).toMatch(new RegExp(`^${id} +run +completed +- +scripted +4 +\\d+ +\\d{4}-`, 'm'));
    expect(text.stdout).toContain("(query: WorkflowType IN ('agentWorkflow', 'conversationWorkflow') AND");
  });

  it('prints the answer as it streams, each tool call as it starts and finishes, then the tool executions and the workflow', async () => {
    // A model with a price: the report gives dollars beside the tokens.
    const r = await runTs(['client.ts', 'run', QUESTION, '--model', 'gpt-4o-mini'], {
      ...env,
      TEMPORAL_UI_URL: 'http://ui.example:8233',
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^4 LLM calls, \d+ tokens \(\d+ prompt, \d+ completion\), \$0\.\d{4}$/m);
    // The answer once (streamed, not repeated at the end); the steps on stderr.
    expect(r.stdout.split('approximately 3.162, which is the square root of ten')).toHaveLength(2);
    expect(r.stderr).toMatch(/→ stringLength\(s="hello"\)\n(.*\n)*  ← stringLength: 5\n/);
    expect(r.stderr).toMatch(/→ sqrt\(x=10\)\n {2}← sqrt: 3\.16/);
    expect(r.stdout).toContain('✓ add(a=5, b=5) → 10');
    expect(r.stdout).toMatch(
      /Temporal UI: http:\/\/ui\.example:8233\/namespaces\/default\/workflows\/agent-what-is-the-square-root-[0-9a-f]{6}/,
    );
  });

  it('prints the events as JSON lines with --events, the answer in several text deltas', async () => {
    const r = await runTs(['client.ts', 'run', QUESTION, '--events'], env);
    expect(r.code).toBe(0);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events.map((e) => e.offset)).toEqual(events.map((_, i) => i));
    expect(events[0]).toMatchObject({ type: 'turn_started', turn: 1, message: QUESTION });
    expect(events.filter((e) => e.type === 'tool_call_finished').map((e) => e.result)).toEqual([
      '5',
      '5',
      '10',
      expect.stringMatching(/^3\.16/),
    ]);
    const deltas = events.filter((e) => e.type === 'text_delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.delta).join('')).toBe('approximately 3.162, which is the square root of ten');
    expect(events[events.length - 1]).toMatchObject({ type: 'turn_completed', result: { status: 'completed' } });
  });

  it('runs immediate tools from the command line', async () => {
    const r = await runTs(
      ['client.ts', 'run', QUESTION, '--tools', 'stringLength,add,sqrt', '--immediate', 'stringLength', '--json'],
      env,
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'immediate',
      content: null,
      iterations: 1,
      toolExecutions: [{ immediate: true }, { immediate: true }],
    });
  });

  it('ends a run at its token budget: --budget-tokens, status budget_exceeded, what was spent', async () => {
    const r = await runTs(['client.ts', 'run', QUESTION, '--budget-tokens', '300', '--json'], env);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ status: 'budget_exceeded', budget: { limit: { tokens: 300 } } });
    expect(out.iterations).toBeLessThan(4);
    expect(out.usage.totalTokens).toBeLessThanOrEqual(300);
    expect(out.budget.left.tokens).toBe(300 - out.usage.totalTokens);
  });

  it('exits 1 with status "failed" and the error when the run fails', async () => {
    const r = await runTs(['client.ts', 'run', 'please fail', '--json'], env);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      status: 'failed',
      content: null,
      toolExecutions: [],
      iterations: 0,
      errorType: 'ModelCall.Auth',
    });
    expect(out.error).toMatch(/rejected the API key \(HTTP 401.*check OPENAI_API_KEY/);
  });

  it('stops the worker gracefully on SIGINT', async () => {
    worker.kill('SIGINT');
    const finished = await worker.exited;
    expect(finished.code).toBe(0);
    expect(finished.stdout).toContain('Worker stopped.');
  });
});

describe('client.ts with Claude: AGENT_MODEL=anthropic:<model>, ANTHROPIC_BASE_URL at a Messages API server', () => {
  it('completes a tool-calling run; the thinking block goes back signed with the tool result; cached tokens are reported', async () => {
    const model = await startScriptedModel([
      {
        ...call(['add', { a: 2, b: 3 }]),
        reasoning: [{ text: 'I will add.', signature: 'U2lnbmVkQnlDbGF1ZGU=' }],
        usage: { cacheWriteTokens: 50 },
      },
      (req) => ({ content: `The sum is ${toolResults(req)[0]}.`, usage: { cachedPromptTokens: 50 } }),
    ]);
    const env = cleanEnv({
      AGENT_DEV_SERVER_PORT: String(await devServerPort()),
      AGENT_DEV_SERVER_DB: `/tmp/durable-agents-claude-${randomUUID()}.db`,
      AGENT_MODEL: 'anthropic:claude-test',
      ANTHROPIC_BASE_URL: model.baseURL.replace(/\/v1$/, ''),
      ANTHROPIC_API_KEY: 'e2e',
    });
    try {
      const image = join(mkdtempSync(join(tmpdir(), 'cli-image-')), 'dot.png');
      writeFileSync(image, Buffer.from(ONE_PIXEL_PNG, 'base64'));
      const r = await runTs(
        ['client.ts', 'run', 'Add 2 and 3', '--tools', 'add', '--image', image, '--json'],
        env,
        120_000,
      );
      expect({ code: r.code, stderr: r.code ? r.stderr : '' }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(r.stdout)).toMatchObject({
        status: 'completed',
        content: 'The sum is 5.',
        usage: { cachedPromptTokens: 50, cacheWriteTokens: 50 },
      });
      const second = model.requests[1].raw as {
        messages: Array<{ role: string; content: unknown[] }>;
        tools: unknown[];
      };
      expect(second.messages[1].content[0]).toEqual({
        type: 'thinking',
        thinking: 'I will add.',
        signature: 'U2lnbmVkQnlDbGF1ZGU=',
      });
      expect(second.messages[2].content).toEqual([
        { type: 'tool_result', tool_use_id: expect.any(String), content: '5', cache_control: { type: 'ephemeral' } },
      ]);
      expect(second.tools).toEqual([expect.objectContaining({ name: 'add', cache_control: { type: 'ephemeral' } })]);
      // --image: the file's bytes went to Claude as an image block before the text.
      expect((model.requests[0].raw as typeof second).messages[0].content[0]).toEqual({
        type: 'image',
        source: { type: 'base64', media_type: 'image/png', data: ONE_PIXEL_PNG },
      });
      const missing = await runTs(['client.ts', 'run', 'x', '--image', `${image}.gone`, '--json'], env, 60_000);
      expect(missing.code).toBe(2);
      expect(JSON.parse(missing.stdout)).toEqual({
        error: `--image ${image}.gone: no such file`,
        errorType: 'Client.InvalidInput',
      });
    } finally {
      await model.close();
    }
  });
});

describe('client.ts run --model anthropic:claude-opus-4-5 --budget-usd 1: a dollar budget priced by the model catalogue', () => {
  it("runs with a cost from @pydantic/genai-prices, and the SDK's deprecation warning shows once, not per call", async () => {
    const model = await startScriptedModel([
      call(['add', { a: 2, b: 3 }]),
      (req) => ({ content: `The sum is ${toolResults(req)[0]}.` }),
    ]);
    const env = cleanEnv({
      AGENT_DEV_SERVER_PORT: String(await devServerPort()),
      AGENT_DEV_SERVER_DB: `/tmp/durable-agents-opus-${randomUUID()}.db`,
      ANTHROPIC_BASE_URL: model.baseURL.replace(/\/v1$/, ''),
      ANTHROPIC_API_KEY: 'e2e',
    });
    try {
      const r = await runTs(
        [
          'client.ts',
          'run',
          'Add 2 and 3',
          '--tools',
          'add',
          '--model',
          'anthropic:claude-opus-4-5',
          '--budget-usd',
          '1',
          '--json',
        ],
        env,
        120_000,
      );
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ status: 'completed', content: 'The sum is 5.' });
      expect(model.requests.map((q) => q.wire)).toEqual(['anthropic', 'anthropic']);
      // Claude Opus 4.5's list price in the catalogue: $5 per million tokens in, $25 out.
      const { promptTokens, completionTokens } = out.usage;
      expect(promptTokens).toBeGreaterThan(0);
      expect(out.usage.costUsd).toBeCloseTo((promptTokens * 5 + completionTokens * 25) / 1_000_000, 5);
      expect(out.budget.spent.costUsd).toBe(out.usage.costUsd);
      // The Anthropic SDK warns of claude-opus-4-5's retirement on each request; the worker says it once.
      expect(r.stderr.match(/The model 'claude-opus-4-5' is deprecated/g)).toHaveLength(1);
    } finally {
      await model.close();
    }
  });
});

describe('npm run demo with the embedded dev server', () => {
  it('answers the demo question with the offline model and exits 0', async () => {
    const port = await devServerPort();
    const r = await runNpm(
      ['run', 'demo'],
      cleanEnv({
        AGENT_DEV_SERVER_PORT: String(port),
        AGENT_DEV_SERVER_DB: `/tmp/durable-agents-demo-${randomUUID()}.db`,
      }),
    );
    expect(r.stderr.replace(/npm warn.*\n/g, '')).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('using the bundled offline scripted model');
    expect(r.stdout).toContain('is approximately 3.162.');
    expect(r.stdout).toContain('✓ stringLength(s="hello") → 5');
    expect(r.stdout).toContain('✓ sqrt(x=10) → 3.1622776601683795');
    expect(r.stdout).toMatch(
      new RegExp(
        `Temporal UI: http://localhost:${port + 1000}/namespaces/default/workflows/agent-what-is-the-square-root-`,
      ),
    );
    // Once: the run's link comes with its outcome, not also when it starts.
    expect(r.stdout.match(/\/workflows\/agent-what-is-the-square-root-/g)).toHaveLength(1);
  });
});

describe('npm run demo against a Temporal server of your own (TEMPORAL_ADDRESS)', () => {
  it('runs its worker against that server and answers the demo question', async () => {
    const r = await runNpm(['run', 'demo'], cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS! }));
    expect(r.stderr.replace(/npm warn.*\n/g, '')).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Temporal: ${process.env.TEST_TEMPORAL_ADDRESS}, namespace default`);
    expect(r.stdout).toContain('is approximately 3.162.');
  });
});

describe('npm start with the embedded dev server', () => {
  it('prints the Web UI address, and on SIGTERM stops the worker and then the server it started', async () => {
    const port = await devServerPort();
    const worker = await startTs(
      ['worker.ts'],
      cleanEnv({
        AGENT_DEV_SERVER_PORT: String(port),
        AGENT_DEV_SERVER_DB: `/tmp/durable-agents-start-${randomUUID()}.db`,
      }),
      /Press Ctrl\+C/,
    );
    expect(worker.output()).toContain(`Temporal Web UI: http://localhost:${port + 1000}/namespaces/default/workflows`);
    expect(await listening(port)).toBe(true);
    worker.kill('SIGTERM');
    const finished = await worker.exited;
    expect(finished.code).toBe(0);
    expect(finished.stdout).toContain('Worker stopped.');
    expect(await listening(port)).toBe(false);
  });
});

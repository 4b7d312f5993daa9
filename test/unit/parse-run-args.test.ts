import { takeTaskQueue, UsageError } from '../../src/cli/option-flags';
import { parseRunArgs } from '../../src/cli/parse-run-args';

const TOOLS = ['stringLength', 'add', 'sqrt'];

describe('parseRunArgs', () => {
  it('maps every flag of the CLI contract onto the run input', () => {
    const cmd = parseRunArgs(
      [
        'What now?',
        '--tools',
        'add, sqrt',
        '--immediate',
        'add',
        '--max-iterations',
        '4',
        '--max-time',
        '30s',
        '--on-limit',
        'generate',
        '--system',
        'Be brief.',
        '--id',
        'agent-x',
        '--json',
      ],
      TOOLS,
    );
    expect(cmd).toEqual({
      input: {
        message: 'What now?',
        tools: ['add', 'sqrt'],
        immediateTools: ['add'],
        maxIterations: 4,
        maxExecutionTime: '30s',
        onLimit: 'generate',
        system: 'Be brief.',
      },
      workflowId: 'agent-x',
      json: true,
      events: false,
    });
  });

  it('takes --events (JSON lines) and --no-stream, and refuses --events with --json', () => {
    expect(parseRunArgs(['hi', '--events', '--no-stream'], TOOLS)).toEqual({
      input: { message: 'hi', stream: false },
      json: false,
      events: true,
    });
    expect(() => parseRunArgs(['hi', '--events', '--json'], TOOLS)).toThrow('--json and --events exclude each other');
  });

  it('takes --model: a named model of the worker, or a provider-prefixed name', () => {
    expect(parseRunArgs(['hi', '--model', 'anthropic:claude-sonnet-4-5'], TOOLS).input.modelSettings).toEqual({
      model: 'anthropic:claude-sonnet-4-5',
    });
    expect(() => parseRunArgs(['hi', '--model', ' '], TOOLS)).toThrow(/--model needs a model name/);
  });

  it('leaves unset options to the workflow defaults', () => {
    expect(parseRunArgs(['hi'], TOOLS)).toEqual({ input: { message: 'hi' }, json: false, events: false });
  });

  it('allows --immediate without --tools (all tools are offered)', () => {
    expect(parseRunArgs(['hi', '--immediate', 'sqrt'], TOOLS).input).toEqual({
      message: 'hi',
      immediateTools: ['sqrt'],
    });
  });

  it.each([
    [['hi', '--max-iterations', '0'], /--max-iterations must be a whole number >= 1/],
    [['hi', '--max-iterations', '2.5'], /--max-iterations must be a whole number >= 1/],
    [['hi', '--tools', ' , '], /--tools needs at least one tool name/],
    [['hi', '--id', ' '], /--id must not be empty/],
    [['a', 'b'], /expected one message, got 2 arguments/],
    [['   '], /"message" must be a non-empty string/],
  ])('%j is a usage error', (args, message) => {
    expect(() => parseRunArgs(args, TOOLS)).toThrow(message);
  });
});

describe('--tool-calling', () => {
  it('accepts the three modes and refuses others', () => {
    expect(parseRunArgs(['hi', '--tool-calling', 'functions'], ['add']).input.toolCalling).toBe('functions');
    expect(parseRunArgs(['hi', '--tool-calling', 'react'], ['add']).input.toolCalling).toBe('react');
    expect(() => parseRunArgs(['hi', '--tool-calling', 'telepathy'], ['add'])).toThrow(
      '--tool-calling must be one of tools, functions, react, got "telepathy"',
    );
  });
});

describe('the flags every command takes', () => {
  it('takes --task-queue wherever it stands, checked; leaves the rest as it was', () => {
    expect(takeTaskQueue(['run', 'hi', '--task-queue', 'support', '--json'])).toEqual({
      taskQueue: 'support',
      rest: ['run', 'hi', '--json'],
    });
    expect(takeTaskQueue(['--task-queue=billing', 'agents'])).toEqual({ taskQueue: 'billing', rest: ['agents'] });
    expect(takeTaskQueue(['status', 'x'])).toEqual({ taskQueue: undefined, rest: ['status', 'x'] });
    // After `--` everything is an argument, even this.
    expect(takeTaskQueue(['send', 'x', '--', '--task-queue'])).toEqual({
      taskQueue: undefined,
      rest: ['send', 'x', '--', '--task-queue'],
    });
    expect(() => takeTaskQueue(['run', 'hi', '--task-queue'])).toThrow(UsageError);
    expect(() => takeTaskQueue(['--task-queue', ''])).toThrow('--task-queue must not be empty');
    expect(() => takeTaskQueue(['--task-queue', 'a\nb'])).toThrow('--task-queue must not contain control characters');
  });

  it('checks tool names only where the tools are known (a worker in this process)', () => {
    expect(parseRunArgs(['hi', '--tools', 'lookup_order'], undefined).input.tools).toEqual(['lookup_order']);
    expect(() => parseRunArgs(['hi', '--tools', 'lookup_order'], TOOLS)).toThrow(/unknown tool lookup_order/);
  });
});

describe('--image', () => {
  it('collects repeated --image flags on run and send, and leaves them out when absent', async () => {
    const send = await import('../../src/cli/conversation/send-command');
    expect(parseRunArgs(['Look', '--image', 'a.png', '--image', 'https://x/b.jpg'], TOOLS).images).toEqual([
      'a.png',
      'https://x/b.jpg',
    ]);
    expect(parseRunArgs(['Look'], TOOLS).images).toBeUndefined();
    expect(send.parse(['c1', 'Look', '--image', 'a.png'], { env: {}, registered: TOOLS })).toMatchObject({
      conversationId: 'c1',
      images: ['a.png'],
    });
    expect(() => parseRunArgs(['Look', '--image'], TOOLS)).toThrow(UsageError);
  });
});

describe('--busy', () => {
  it('takes a busy policy for send and chat, and names the policies otherwise', async () => {
    const send = await import('../../src/cli/conversation/send-command');
    const context = { env: {}, registered: TOOLS };
    expect(send.parse(['c1', 'also this', '--busy', 'steer'], context)).toMatchObject({
      conversationId: 'c1',
      options: { busy: 'steer' },
    });
    expect(() => send.parse(['c1', 'x', '--busy', 'later'], context)).toThrow(
      '--busy: must be one of enqueue, reject, interrupt, steer, not "later"',
    );
  });
});

describe('budget flags', () => {
  it('map onto the run input, and refuse what is not a budget', () => {
    expect(
      parseRunArgs(['Go', '--budget-tokens', '3000', '--budget-usd', '0.25', '--on-budget', 'wrap_up'], TOOLS).input,
    ).toMatchObject({ budget: { tokens: 3000, costUsd: 0.25 }, onBudget: 'wrap_up' });
    expect(() => parseRunArgs(['Go', '--budget-tokens', 'lots'], TOOLS)).toThrow(
      /--budget-tokens must be a whole number/,
    );
    expect(() => parseRunArgs(['Go', '--budget-usd', '0'], TOOLS)).toThrow(/--budget-usd must be a number of dollars/);
    expect(() => parseRunArgs(['Go', '--on-budget', 'wrap_up'], TOOLS)).toThrow(/--on-budget needs a budget/);
    expect(() => parseRunArgs(['Go', '--budget-tokens', '9', '--on-budget', 'later'], TOOLS)).toThrow(
      /"stop" or "wrap_up"/,
    );
  });
});

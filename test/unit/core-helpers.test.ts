import { ApplicationFailure } from '@temporalio/common';
import { formatLogEntry } from '../../src/telemetry/logging';
import { agentWorkflowId, runSummary, toolCallSummary } from '../../src/core/context/summaries';
import { parseDuration } from '../../src/core/time/duration';
import { parseToolArguments } from '../../src/core/messages/tool-arguments';
import { shouldReturnImmediately, toolErrorText, toolResultText } from '../../src/core/messages/tool-results';
import { AGENT_INPUT_FIELD_NAMES, unknownFieldProblem, validateAgentInput } from '../../src/core/run/run-input';

describe('toolResultText', () => {
  it('follows LangChain4j: void is "Success", strings as is, the rest JSON', () => {
    expect(toolResultText(undefined)).toBe('Success');
    expect(toolResultText('5 degrees')).toBe('5 degrees');
    expect(toolResultText(3.5)).toBe('3.5');
    expect(toolResultText({ a: [1, null] })).toBe('{"a":[1,null]}');
    expect(toolResultText(null)).toBe('null');
  });
  it('prefixes errors once', () => {
    expect(toolErrorText('boom')).toBe('Error: boom');
    expect(toolErrorText('Error: boom')).toBe('Error: boom');
  });
});

describe('parseToolArguments', () => {
  it('reads objects, and blank as {}', () => {
    expect(parseToolArguments('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseToolArguments('')).toEqual({ ok: true, value: {} });
    expect(parseToolArguments(undefined)).toEqual({ ok: true, value: {} });
  });
  it('explains invalid JSON and non-objects', () => {
    const bad = parseToolArguments('{"a":');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/not valid JSON/);
    const arr = parseToolArguments('[1,2]');
    expect(!arr.ok && arr.error).toMatch(/must be a JSON object/);
  });
});

describe('parseDuration', () => {
  it.each([
    ['30s', 30_000],
    ['1.5m', 90_000],
    ['250ms', 250],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    [500, 500],
  ])('%p → %p ms', (input, ms) => expect(parseDuration(input as string)).toBe(ms));
  it.each(['', 'soon', '-5s', '0s', '10 parsecs'])('rejects %p', (input) =>
    expect(() => parseDuration(input)).toThrow(/invalid duration/),
  );
  it('refuses a bare number in a string, naming the units', () => {
    // "5" used to mean 5 ms: `--max-time 5` ended a run at once.
    expect(() => parseDuration('5')).toThrow('invalid duration "5": add a unit (ms, s, m, h, d), e.g. 5s');
  });
});

describe('validateAgentInput', () => {
  it('accepts a minimal input', () => expect(validateAgentInput({ message: 'hi' })).toEqual([]));
  it('lists every problem', () => {
    const problems = validateAgentInput({
      message: ' ',
      maxIterations: 0,
      maxExecutionTime: 'x',
      onLimit: 'panic',
      tools: 'add',
    });
    expect(problems).toHaveLength(5);
    expect(problems.join('\n')).toMatch(/message.*maxIterations|maxIterations/s);
  });
  it('rejects non-objects', () =>
    expect(validateAgentInput(null)).toEqual(['the input must be an object with a "message"']));
  it('checks model settings and whom a run works for before it starts, naming what is wanted', () => {
    const problems = (modelSettings: unknown) => validateAgentInput({ message: 'hi', modelSettings });
    expect(problems({ model: 'openai:gpt-5.4-mini', temperature: 0.2, maxTokens: 100 })).toEqual([]);
    expect(problems('gpt-4o')).toEqual([expect.stringMatching(/"modelSettings" must be an object/)]);
    expect(problems({ model: 42 })).toEqual([expect.stringMatching(/"modelSettings.model" must be a model name/)]);
    expect(problems({ temperature: 'hot' })).toEqual([expect.stringMatching(/temperature.*0 to 2/)]);
    expect(problems({ maxTokens: 0 })).toEqual([expect.stringMatching(/maxTokens.*>= 1/)]);
    expect(problems({ thinking: { budgetTokens: 10 } })).toEqual([expect.stringMatching(/budgetTokens.*1024/)]);
    expect(problems({ reasoningEffort: 'max' })).toEqual([expect.stringMatching(/minimal, low, medium, high/)]);
    expect(problems({ fallbackModels: ['a', 3] })).toEqual([expect.stringMatching(/fallbackModels/)]);
    expect(validateAgentInput({ message: 'hi', delegatedBy: 'x' })).toEqual([
      expect.stringMatching(/"delegatedBy" must list 1 to 16 agents/),
    ]);
    expect(validateAgentInput({ message: 'hi', delegatedBy: [{ agent: 'planner' }] })).toEqual([]);
    // A workflow checks only what it checked when it started: its history replays the same.
    expect(validateAgentInput({ message: 'hi', modelSettings: { model: 42 } }, { asStarted: true })).toEqual([]);
  });
});

describe('shouldReturnImmediately', () => {
  it('needs every call immediate and no error', () => {
    const ok = { result: 'x', error: false };
    expect(shouldReturnImmediately([{ immediate: true }, { immediate: true }], [ok, ok])).toBe(true);
    expect(shouldReturnImmediately([{ immediate: true }, { immediate: false }], [ok, ok])).toBe(false);
    expect(shouldReturnImmediately([{ immediate: true }], [{ result: 'Error: x', error: true }])).toBe(false);
    expect(shouldReturnImmediately([], [])).toBe(false);
  });
});

describe('summaries', () => {
  it('formats tool calls for the Temporal UI', () => {
    expect(toolCallSummary('add', { a: 5, b: 5 })).toBe('add(a=5, b=5)');
    expect(toolCallSummary('stringLength', { s: 'hello' })).toBe('stringLength(s="hello")');
    expect(toolCallSummary('x', { s: 'y'.repeat(500) }).length).toBeLessThanOrEqual(200);
  });
  it('builds readable workflow ids', () => {
    expect(agentWorkflowId('What is the square root of 2?', 'abc123')).toBe('agent-what-is-the-square-root-abc123');
    expect(agentWorkflowId('北京', 'abc123')).toBe('agent-abc123');
  });
  it('puts the message on one line', () => expect(runSummary('a\n  b')).toBe('a b'));
});

describe('formatLogEntry', () => {
  it('spells out errors in log metadata instead of "{}"', () => {
    const failure = ApplicationFailure.create({
      message: 'rate limited',
      type: 'ModelCall.RateLimit',
      cause: new Error('HTTP 429'),
    });
    const line = formatLogEntry({
      level: 'WARN',
      message: 'Activity failed',
      meta: { activityType: 'callModel', error: failure },
    });
    expect(line).toBe(
      '[WARN] Activity failed {"activityType":"callModel","error":{"name":"ApplicationFailure","type":"ModelCall.RateLimit","message":"rate limited","cause":{"name":"Error","message":"HTTP 429"}}}',
    );
    expect(formatLogEntry({ level: 'INFO', message: 'plain' })).toBe('[INFO] plain');
  });
});

describe('unknownFieldProblem', () => {
  it('names a field none of the known ones, with the one it was likely meant to be', () => {
    expect(unknownFieldProblem({ message: 'hi' }, AGENT_INPUT_FIELD_NAMES)).toBeUndefined();
    expect(unknownFieldProblem({ message: 'hi', maxIteration: 3 }, AGENT_INPUT_FIELD_NAMES)).toMatch(
      /^unknown field "maxIteration" \(did you mean "maxIterations"\?\); the fields are message, /,
    );
    expect(unknownFieldProblem({ MESSAGE: 'hi' }, ['message'])).toMatch(/did you mean "message"/);
    expect(unknownFieldProblem({ colour: 'red' }, ['message'])).toBe('unknown field "colour"; the fields are message');
  });
});

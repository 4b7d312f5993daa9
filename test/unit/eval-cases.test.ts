import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEvalArgs } from '../../src/cli/eval-command';
import { expectationFailures, parseDataset } from '../../src/client/eval-cases';
import { summarize } from '../../src/client/run-eval';

describe('eval datasets', () => {
  it('read one case per line, skipping blank and # lines', () => {
    const cases = parseDataset(
      [
        '# a comment',
        '{"input": "What is 2+2?", "expected": {"contains": "4"}}',
        '',
        '{"input": {"message": "Hi", "agent": "support"}, "judge": "polite", "name": "greeting"}',
      ].join('\n'),
    );
    expect(cases).toEqual([
      { input: 'What is 2+2?', expected: { contains: '4' }, line: 2 },
      { input: { message: 'Hi', agent: 'support' }, judge: 'polite', name: 'greeting', line: 4 },
    ]);
  });

  it('name every bad line with its number, before anything runs', () => {
    expect(() =>
      parseDataset(
        [
          'not json',
          '{"input": ""}',
          '{"input": "x", "expected": {"startsWith": "a"}}',
          '{"input": "x", "expected": {"regex": "("}}',
          '{"input": "x"}',
          '{"input": "x", "expected": {"toolCalls": [1]}}',
          '{"input": "x", "expected": {"toolCalls": [{"name": "add", "arguments": null}]}}',
          '{"input": "x", "expected": {"schema": {"type": "nonsense"}}}',
        ].join('\n'),
        'cases.jsonl',
      ),
    ).toThrow(
      new Error(
        [
          'cases.jsonl:1: not JSON',
          'cases.jsonl:2: "input" must be a message, or an object with a "message"',
          'cases.jsonl:3: "expected" may hold contains, equals, regex, schema, toolCalls; not startsWith',
          'cases.jsonl:4: "expected.regex": Invalid regular expression: /(/: Unterminated group',
          'cases.jsonl:5: give "expected", "judge", or both',
          'cases.jsonl:6: "expected.toolCalls" must be a list of tool names or {"name", "arguments"?: {...}}',
          'cases.jsonl:7: "expected.toolCalls" must be a list of tool names or {"name", "arguments"?: {...}}',
          'cases.jsonl:8: "expected.schema" cannot be used: Unsupported type: nonsense',
        ].join('\n'),
      ),
    );
    expect(() => parseDataset('\n# nothing\n')).toThrow(/holds no cases/);
  });
});

describe('eval scoring', () => {
  const outcome = {
    status: 'completed',
    content: 'The total is 42 EUR.',
    toolExecutions: [
      { name: 'lookup', arguments: { id: 'A-1' } },
      { name: 'add', arguments: { a: 40, b: 2 } },
    ],
  };

  it('passes when every check holds', () => {
    expect(
      expectationFailures(
        {
          contains: 'total',
          regex: '\\d+ EUR',
          equals: 'The total is 42 EUR.',
          toolCalls: ['lookup', { name: 'add', arguments: { a: 40 } }],
        },
        outcome,
      ),
    ).toEqual([]);
  });

  it('gives one reason per check that fails', () => {
    expect(
      expectationFailures(
        { contains: 'dollars', regex: '^\\d+$', toolCalls: ['add', 'lookup'], schema: { type: 'object' } },
        outcome,
      ),
    ).toEqual([
      'the answer "The total is 42 EUR." does not contain "dollars"',
      'the answer "The total is 42 EUR." does not match /^\\d+$/',
      'the answer is not JSON, so it cannot match the schema',
      'expected a call of lookup after the ones before it; the calls made: lookup, add',
    ]);
  });

  it('checks structured output by equality and by schema', () => {
    const structured = { status: 'completed', content: '{"n":3}', output: { n: 3 }, toolExecutions: [] };
    expect(expectationFailures({ equals: { n: 3 } }, structured)).toEqual([]);
    expect(expectationFailures({ equals: { n: 4 } }, structured)).toHaveLength(1);
    const schema = { type: 'object', properties: { n: { type: 'string' } }, required: ['n'] };
    expect(expectationFailures({ schema }, structured)[0]).toMatch(/^the output does not match the schema: n /);
  });

  it('fails a case whose run failed, saying why', () => {
    expect(
      expectationFailures({ contains: 'x' }, { status: 'failed', error: 'model down', toolExecutions: [] }),
    ).toEqual(['the run failed: model down']);
  });

  it('sums cases into pass rate, tokens and cost (only when every case has a cost)', () => {
    const usage = (t: number, costUsd?: number) => ({
      promptTokens: t,
      completionTokens: 0,
      totalTokens: t,
      ...(costUsd === undefined ? {} : { costUsd }),
    });
    const base = { name: 'x', workflowId: 'w', status: 'completed', reasons: [] };
    const summary = summarize([
      { ...base, pass: true, usage: usage(10, 0.001) },
      { ...base, pass: false, usage: usage(20, 0.002) },
      { ...base, pass: true, usage: usage(30, 0.003) },
    ]);
    expect(summary).toEqual({
      total: 3,
      passed: 2,
      failed: 1,
      passRate: 0.667,
      usage: { promptTokens: 60, completionTokens: 0, totalTokens: 60 },
      costUsd: 0.006,
    });
    expect(summarize([{ ...base, pass: true, usage: usage(1) }]).costUsd).toBeUndefined();
  });
});

describe('eval on the command line', () => {
  it('checks every case’s run input and the judge model before anything runs, naming the line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'eval-args-'));
    const file = join(dir, 'cases.jsonl');
    writeFileSync(
      file,
      [
        JSON.stringify({ input: 'fine', expected: { contains: 'x' } }),
        JSON.stringify({ input: { message: 'hi', maxIterations: 0 }, expected: { contains: 'x' } }),
      ].join('\n'),
    );
    expect(() => parseEvalArgs([file], undefined)).toThrow(new RegExp(`${file}:2: .*maxIterations`));
    writeFileSync(file, JSON.stringify({ input: 'fine', expected: { contains: 'x' } }));
    expect(parseEvalArgs([file], undefined).cases).toHaveLength(1);
    expect(() => parseEvalArgs([file, '--judge-model', ' '], undefined)).toThrow(/--judge-model needs a model name/);
  });
});

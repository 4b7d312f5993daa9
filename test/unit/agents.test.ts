import { z } from 'zod';
import { AgentRegistry } from '../../src/agents/agent-registry';
import { defineAgent } from '../../src/agents/define-agent';
import { checkAnswer, OutputSchemas } from '../../src/activities/structured-output';
import { applyAgent } from '../../src/core/state/agents';
import { applyModelReply, nextStep, startRun } from '../../src/core/run/agent-loop';
import { runResult } from '../../src/core/run/run-result';
import type { ModelReply } from '../../src/core/messages/model-reply';
import type { RunState } from '../../src/core/state/run-state';
import type { ToolInfo } from '../../src/core/messages/tool-info';
import { add, exampleTools, searchWeather, sqrt } from '../../scripts/demo-agents';
import { defineTool, ToolRegistry } from '../../src/tools';

const weatherOutput = z.object({
  city: z.string(),
  temperature: z.number(),
  temperatureUnit: z.enum(['CELSIUS', 'FAHRENHEIT']),
});

describe('defineAgent', () => {
  it('accepts a complete agent', () => {
    const agent = defineAgent({
      name: 'weather',
      instructions: 'Report the weather.',
      tools: [searchWeather],
      maxExecutionTime: '1m',
      output: weatherOutput,
    });
    expect(agent.name).toBe('weather');
  });

  it('refuses mistakes when the worker starts, not in a run', () => {
    expect(() =>
      defineAgent({
        name: 'bad name!',
        instructions: ' ',
        tools: [],
        maxIterations: 0,
        maxExecutionTime: '5',
        toolCalling: 'smoke' as never,
      }),
    ).toThrow(
      /defineAgent\("bad name!"\): "name" must be an agent name.*"instructions" must be a non-empty string; "maxIterations" must be an integer >= 1; "toolCalling" must be one of tools, functions, react; "maxExecutionTime": invalid duration "5": add a unit/,
    );
    expect(() => defineAgent({ name: 'x', instructions: 'i', tools: [], output: { type: 'object' } as never })).toThrow(
      /"output" must be a zod schema/,
    );
    expect(() => defineAgent({ name: 'x', instructions: 'i', tools: [], examples: ['fine', ''] })).toThrow(
      /"examples" must be a list of at most 10 non-empty questions/,
    );
    expect(defineAgent({ name: 'x', instructions: 'i', tools: [], examples: ['What can you do?'] }).examples).toEqual([
      'What can you do?',
    ]);
  });
});

describe('AgentRegistry', () => {
  const math = defineAgent({
    name: 'math',
    instructions: 'Compute.',
    tools: [add, sqrt],
    approvalTools: ['sqrt'],
    model: 'gpt-x',
    temperature: 0.2,
    maxIterations: 4,
  });

  it('registers the tools agents hold by reference, and refuses a name that means two tools', () => {
    const tools = new ToolRegistry();
    const agents = new AgentRegistry([math], tools);
    expect(tools.names()).toEqual(['add', 'sqrt']);
    expect(agents.catalog()).toEqual([
      { name: 'math', tools: ['add', 'sqrt'], model: 'gpt-x', structuredOutput: false },
    ]);
    const impostor = defineTool({
      name: 'add',
      description: 'not the real add',
      parameters: z.object({}),
      execute: () => 0,
    });
    expect(
      () => new AgentRegistry([defineAgent({ name: 'other', instructions: 'i', tools: [impostor] })], tools),
    ).toThrow(/has a tool "add" that differs from the registered tool/);
    expect(() => new AgentRegistry([math, math], new ToolRegistry())).toThrow(
      /an agent named "math" is already registered/,
    );
    expect(
      () => new AgentRegistry([defineAgent({ name: 'n', instructions: 'i', tools: ['teleport'] })], new ToolRegistry()),
    ).toThrow(/names the tool "teleport", which is not registered/);
  });

  it('resolves settings and tools; the run overrides tools, and approval tools add up', () => {
    const agents = new AgentRegistry([math], new ToolRegistry(exampleTools));
    const plain = agents.resolve('math', {});
    expect(plain.ok && plain.resolved).toEqual({
      settings: {
        name: 'math',
        instructions: 'Compute.',
        modelSettings: { model: 'gpt-x', temperature: 0.2 },
        maxIterations: 4,
      },
      tools: [expect.objectContaining({ name: 'add' }), expect.objectContaining({ name: 'sqrt', needsApproval: true })],
    });
    const narrowed = agents.resolve('math', { tools: ['add', 'sum'], approvalTools: ['add'] });
    expect(narrowed.ok && narrowed.resolved.tools.map((t) => [t.name, Boolean(t.needsApproval)])).toEqual([
      ['add', true],
      ['sum', false],
    ]);
    expect(agents.resolve('nobody', {})).toEqual({
      ok: false,
      type: 'Agent.UnknownAgent',
      message: 'no agent named "nobody" on this worker (it serves: math)',
    });
    expect(agents.resolve('math', { tools: ['warp'] })).toMatchObject({ ok: false, type: 'Agent.UnknownTool' });
  });
});

describe('applyAgent', () => {
  it('puts the agent under the run: what the run sets wins, model settings merge field by field', () => {
    const agent = {
      name: 'a',
      instructions: 'Be exact.',
      maxIterations: 4,
      onLimit: 'generate' as const,
      modelSettings: { model: 'm1', temperature: 0.5 },
    };
    expect(applyAgent({ agent: 'a' }, agent)).toEqual({
      agent: 'a',
      system: 'Be exact.',
      maxIterations: 4,
      onLimit: 'generate',
      modelSettings: { model: 'm1', temperature: 0.5 },
    });
    expect(
      applyAgent({ agent: 'a', system: 'Be brief.', maxIterations: 9, modelSettings: { temperature: 0 } }, agent),
    ).toEqual({
      agent: 'a',
      system: 'Be brief.',
      maxIterations: 9,
      onLimit: 'generate',
      modelSettings: { model: 'm1', temperature: 0 },
    });
  });
});

describe('structured answers', () => {
  const schemas = new OutputSchemas(
    new AgentRegistry(
      [defineAgent({ name: 'weather', instructions: 'i', tools: [searchWeather], output: weatherOutput })],
      new ToolRegistry(),
    ),
  );
  const schema = schemas.for({ agent: 'weather' })!;

  it("checks a final answer against the agent's schema, tolerating a code fence", () => {
    expect(checkAnswer(schema, '{"city":"Beijing","temperature":30,"temperatureUnit":"CELSIUS"}')).toEqual({
      ok: true,
      value: { city: 'Beijing', temperature: 30, temperatureUnit: 'CELSIUS' },
    });
    expect(
      checkAnswer(schema, '```json\n{"city":"Beijing","temperature":30,"temperatureUnit":"CELSIUS"}\n```').ok,
    ).toBe(true);
  });

  it('says exactly what is wrong, for the LLM to fix', () => {
    expect(checkAnswer(schema, 'It is 30 degrees')).toEqual({
      ok: false,
      error: expect.stringMatching(/^the answer is not JSON \(Unexpected token/),
    });
    expect(checkAnswer(schema, '{"city":"Beijing","temperature":"30","temperatureUnit":"C"}')).toEqual({
      ok: false,
      error:
        'the JSON does not match the schema: temperature: Invalid input: expected number, received string; temperatureUnit: Invalid option: expected one of "CELSIUS"|"FAHRENHEIT"',
    });
    expect(checkAnswer(schema, null)).toEqual({ ok: false, error: 'the answer is empty; it must be a JSON value' });
  });

  it("takes a run's own JSON Schema, and checks it the same way", () => {
    const own = schemas.for({
      agent: 'weather',
      output: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] },
    })!;
    expect(checkAnswer(own, '{"answer": 3.162}')).toEqual({ ok: true, value: { answer: 3.162 } });
    expect(checkAnswer(own, '{"answer": "3"}')).toEqual({
      ok: false,
      error: 'the JSON does not match the schema: answer: Invalid input: expected number, received string',
    });
  });

  it('sends an invalid answer back to the LLM as an iteration, and keeps a valid one as the output', () => {
    const tools: ToolInfo[] = [];
    let state: RunState = startRun({ message: 'weather in Beijing?', maxIterations: 3 }, tools);
    const reply = (over: Partial<ModelReply>): ModelReply => ({
      content: null,
      toolCalls: [],
      finishReason: 'stop',
      usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
      ...over,
    });
    const step = () => {
      const s = nextStep(state);
      if (s.type !== 'call_model') throw new Error(`expected a model call, got ${s.type}`);
      return s;
    };
    state = applyModelReply(state, step(), reply({ content: '30 degrees', outputError: 'the answer is not JSON' }));
    expect(state.iterations).toBe(1);
    expect(state.messages.at(-1)).toEqual({
      role: 'user',
      content: expect.stringMatching(
        /^Your answer is not valid: the answer is not JSON\nReply again with only the JSON value/,
      ),
    });
    expect(nextStep(state).type).toBe('call_model');
    state = applyModelReply(state, step(), reply({ content: '{"temperature":30}', output: { temperature: 30 } }));
    expect(runResult(state, 'wf')).toMatchObject({
      status: 'completed',
      content: '{"temperature":30}',
      output: { temperature: 30 },
      iterations: 2,
    });
  });
});

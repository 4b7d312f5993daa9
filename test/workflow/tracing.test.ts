import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { bundleWorkflowCode } from '@temporalio/worker';
import { z } from 'zod';
import { AgentsPlugin } from '../../src/worker/agents-plugin';
import { createAgentWorker } from '../../src/worker/create-agent-worker';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { installTracing } from '../../src/telemetry/tracing';
import { defineTool } from '../../src/tools';
import { answer, call, startModel } from '../helpers/scripted-model';
import { modelAt, useTestTemporal } from '../helpers/temporal';

/** One trace per run, from the client's start through every step, with GenAI spans for model and tool calls. */
const temporal = useTestTemporal();

const exporter = new InMemorySpanExporter();
const tracing = { spanProcessor: new SimpleSpanProcessor(exporter) };
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks up',
  parameters: z.object({ q: z.string() }),
  execute: ({ q }) => `found ${q}`,
});
const broken = defineTool({
  name: 'broken',
  description: 'Fails',
  parameters: z.object({}),
  execute: () => {
    throw new Error('out of order');
  },
});

let bundle: string;
beforeAll(async () => {
  // The workflow side of tracing lives in the bundle: bundled with the plugin, as users do.
  const plugin = new AgentsPlugin({ tools: [lookup, broken], tracing });
  const quiet = () => undefined;
  ({ code: bundle } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows/bundle'),
    plugins: [plugin],
    logger: { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet },
  }));
}, 90_000);

describe('tracing', () => {
  it('one trace from the client start through the workflow, its activities and GenAI spans of each model and tool call', async () => {
    const model = await startModel((req) =>
      req.messages[req.messages.length - 1].role === 'tool'
        ? answer('all done')
        : call(['lookup', { q: 'otters' }, 'call_1'], ['broken', {}, 'call_2']),
    );
    const t = temporal();
    const client = new Client({ connection: t.client.connection, plugins: [installTracing(tracing)] });
    const taskQueue = `trace-${randomUUID()}`;
    const worker = await createAgentWorker({
      connection: t.nativeConnection,
      taskQueue,
      model: modelAt(model.baseURL),
      registry: [lookup, broken],
      tracing,
      workflowBundle: { code: bundle },
      shutdownGraceTime: '1s',
    });
    exporter.reset();
    const handle = await worker.runUntil(async () => {
      const h = await startAgentRun(client, { message: 'look up otters' }, { taskQueue });
      expect(await runOutcome(h)).toMatchObject({ status: 'completed', content: 'all done' });
      return h;
    });
    const spans = exporter.getFinishedSpans();
    const byName = (name: string) => spans.filter((s) => s.name === name);
    const parentOf = (s: ReadableSpan) => spans.find((p) => p.spanContext().spanId === s.parentSpanId);
    const [start] = byName('StartWorkflow:agentWorkflow');
    expect(start).toBeDefined();
    // Everything of the run is in the client's trace.
    const trace = spans.filter((s) => s.spanContext().traceId === start.spanContext().traceId);
    const [run] = byName('RunWorkflow:agentWorkflow');
    expect(parentOf(run)?.name).toBe('StartWorkflow:agentWorkflow');
    const chats = byName('chat scripted');
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(trace).toContain(chat);
      expect(parentOf(chat)?.name).toBe('RunActivity:callModel');
      expect(parentOf(parentOf(chat)!)?.name).toBe('StartActivity:callModel');
      expect(parentOf(parentOf(parentOf(chat)!)!)?.name).toBe('RunWorkflow:agentWorkflow');
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'scripted',
        'server.address': '127.0.0.1',
      });
      expect(chat.attributes['gen_ai.usage.input_tokens']).toEqual(expect.any(Number));
      expect(chat.attributes['gen_ai.usage.output_tokens']).toEqual(expect.any(Number));
    }
    expect(chats.map((c) => c.attributes['gen_ai.response.finish_reasons'])).toEqual(
      expect.arrayContaining([['tool_calls'], ['stop']]),
    );
    const [tool] = byName('execute_tool lookup');
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'call_1',
    });
    expect(parentOf(tool)?.name).toBe('RunActivity:executeTool');
    expect(trace).toContain(tool);
    const [failed] = byName('execute_tool broken');
    // A tool that throws: its span is an error with the failure's type (the LLM reads the error as the result).
    expect(failed.status.code).toBe(2);
    expect(failed.attributes['error.type']).toBe('Tool.ExecutionError');
    expect(trace.every((s) => s.spanContext().traceId === start.spanContext().traceId)).toBe(true);
    expect(handle.workflowId).toMatch(/^agent-look-up-otters-/);
  });
});

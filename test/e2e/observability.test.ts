import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { freePort } from '../../src/connection/dev-server';
import { cleanEnv, runTs, startTs } from '../helpers/processes';
import { answer, call, startModel } from '../helpers/scripted-model';

/** worker.ts and client.ts as operators run them: metrics scraped from AGENT_METRICS_PORT, traces sent over OTLP. */

/** A stand-in OTLP/HTTP collector: keeps the bodies posted to /v1/traces. */
async function collector(): Promise<{ url: string; bodies: string[]; server: Server }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url === '/v1/traces') bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, bodies, server };
}

describe('observability of worker.ts and client.ts', () => {
  it('serves Prometheus metrics (Temporal worker metrics and agent_*), and exports one trace per run over OTLP', async () => {
    const llm = await startModel((req) =>
      req.messages[req.messages.length - 1].role === 'tool' ? answer('done') : call(['add', { a: 1, b: 2 }]),
    );
    const otlp = await collector();
    const metricsPort = await freePort();
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: `e2e-obs-${randomUUID()}`,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'e2e',
      AGENT_MODEL: 'obs-model',
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_SERVICE_NAME: 'agents-under-test',
    });
    const worker = await startTs(
      ['worker.ts'],
      { ...env, AGENT_METRICS_PORT: String(metricsPort), AGENT_METRICS_HOST: '127.0.0.1' },
      /Press Ctrl\+C/,
    );
    try {
      const r = await runTs(['client.ts', 'run', 'add 1 and 2', '--json'], env);
      expect(r.code).toBe(0);
      const { workflowId } = JSON.parse(r.stdout);
      // Metrics: counters are exported as they are recorded; poll briefly.
      let text = '';
      for (let i = 0; i < 30 && !/agent_runs\{[^}]*status="completed"/.test(text); i++) {
        text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        if (!/agent_runs\{[^}]*status="completed"/.test(text)) await new Promise((res) => setTimeout(res, 500));
      }
      expect(text).toMatch(/^agent_runs\{[^}]*kind="run"[^}]*status="completed"[^}]*\} 1$/m);
      expect(text).toMatch(/^agent_model_call_latency_bucket\{[^}]*model="obs-model"[^}]*outcome="ok"/m);
      expect(text).toMatch(/^agent_input_tokens\{[^}]*model="obs-model"[^}]*\} \d+/m);
      expect(text).toMatch(/^agent_output_tokens\{/m);
      expect(text).toMatch(/^temporal_/m);
      // Traces: the client's and the worker's spans reach the collector, in one trace.
      worker.kill('SIGTERM');
      await worker.exited;
      const all = otlp.bodies.join('\n');
      for (const name of [
        'StartWorkflow:agentWorkflow',
        'RunWorkflow:agentWorkflow',
        'RunActivity:callModel',
        'chat obs-model',
        'execute_tool add',
      ])
        expect(all).toContain(`"${name}"`);
      expect(all).toContain('agents-under-test');
      expect(all).toContain(workflowId);
      // The run's spans, in one trace: the client's start, the workflow, its activities, its model
      // and tool calls. (Other operations of a client, such as the progress polls of one that
      // waits long on a loaded machine, start traces of their own; they are shown, not counted.)
      const spans = otlp.bodies.flatMap((b) =>
        (JSON.parse(b).resourceSpans ?? []).flatMap(
          (rs: { scopeSpans: { spans: { traceId: string; name: string }[] }[] }) =>
            rs.scopeSpans.flatMap((ss) => ss.spans),
        ),
      ) as { traceId: string; name: string }[];
      const ofRun = spans.filter((s) =>
        /^(StartWorkflow|RunWorkflow|StartActivity|RunActivity|chat |execute_tool )/.test(s.name),
      );
      const traceIds = new Set(ofRun.map((s) => s.traceId));
      expect(traceIds.size === 1 ? 'one trace' : ofRun.map((s) => `${s.traceId.slice(0, 8)} ${s.name}`)).toBe(
        'one trace',
      );
      const others = spans.filter((s) => !traceIds.has(s.traceId));
      if (others.length) console.log(`spans in other traces: ${others.map((s) => s.name).join(', ')}`);
    } finally {
      worker.kill('SIGKILL');
      otlp.server.close();
      await llm.close();
    }
  });
});

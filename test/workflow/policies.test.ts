import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { AgentsPlugin } from '../../src/worker/agents-plugin';
import { runOutcome, startAgentRun } from '../../src/client/run-agent';
import { keptEvents } from '../../src/client/event-stream';
import { recordedDecisions, tryPolicies, type PolicyCheckReport } from '../../src/client/policy-check';
import { pendingApprovalsQuery } from '../../src/contracts/definitions';
import { exampleTools } from '../../scripts/demo-agents';
import { defineAgent } from '../../src/agents/define-agent';
import type { PolicyMode } from '../../src/core/state/policy-types';
import { answer, call, startModel, toolResults } from '../helpers/scripted-model';
import { modelAt, useTestTemporal } from '../helpers/temporal';
import { cleanEnv, runTs } from '../helpers/processes';
import { itInSandbox } from '../helpers/sandbox';
import { PROXY_PORT } from '../../src/workspace/network-proxy';
import { createServer as createHttpServer } from 'node:http';

/**
 * Policies as code against a real dev server: Cedar policies on the worker decide each tool call
 * a scripted run makes, forbid (the model reads which policy, and goes on), ask (a person approves
 * through the CLI), count calls per run, and in log mode let everything go while recording.
 */
const temporal = useTestTemporal();
/** The test whose commands run in bubblewrap. */
const withSandbox = itInSandbox('policies.test');

const POLICIES = `
permit(principal, action, resource);

@id("no-big-adds")
forbid(principal, action == Action::"callTool", resource == Tool::"add")
  when { context.args has a && context.args.a.greaterThan(decimal("100.0")) };

@id("ask-for-roots") @decision("ask")
forbid(principal, action, resource == Tool::"sqrt");

@id("leads-do-not-add")
forbid(principal == Agent::"lead", action, resource == Tool::"add");

@id("two-lengths-a-run")
forbid(principal, action, resource == Tool::"stringLength")
  when { context.run.toolCalls has stringLength && context.run.toolCalls.stringLength >= 2 };
`;

/** Each of `calls` in turn, one per model call; then an answer listing the tools' results. */
function script(calls: Array<Array<[string, unknown]>>) {
  return startModel((req) => {
    const done = req.messages.filter((m) => m.role === 'assistant').length;
    return done < calls.length ? call(...calls[done]) : answer(toolResults(req).join(' | '));
  });
}

/** A lead that asks a researcher (an agent as a tool), who adds. */
const agents = [
  defineAgent({
    name: 'lead',
    instructions: 'You lead.',
    tools: [],
    agents: [defineAgent({ name: 'researcher', description: 'Adds', instructions: 'You research.', tools: ['add'] })],
  }),
];

async function withWorker<T>(
  baseURL: string,
  mode: PolicyMode,
  work: (taskQueue: string) => Promise<T>,
  policies = POLICIES,
): Promise<T> {
  const t = temporal();
  const taskQueue = `policies-${randomUUID()}`;
  const worker = await Worker.create({
    connection: t.nativeConnection,
    taskQueue,
    plugins: [
      new AgentsPlugin({
        model: modelAt(baseURL),
        tools: exampleTools,
        agents,
        policies: { text: { 'test.cedar': policies }, mode },
        workspaces: { dir: mkdtempSync(join(tmpdir(), 'policies-ws-')) },
      }),
    ],
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1s',
  });
  return worker.runUntil(() => work(taskQueue));
}

it('forbids by the arguments and by what the run did, naming the policy to the model, and asks a person, who approves through the CLI', async () => {
  const model = await script([
    [
      ['add', { a: 500, b: 1 }],
      ['add', { a: 5, b: 1 }],
    ],
    [
      ['stringLength', { s: 'a' }],
      ['stringLength', { s: 'bb' }],
      ['stringLength', { s: 'ccc' }],
    ],
    [['sqrt', { x: 16 }]],
  ]);
  await withWorker(model.baseURL, 'enforce', async (taskQueue) => {
    const t = temporal();
    const handle = await startAgentRun(
      t.client,
      { message: 'go', tools: ['add', 'stringLength', 'sqrt'] },
      { taskQueue },
    );
    // The sqrt call waits for a person: approved through the CLI, as an operator would.
    let callId: string | undefined;
    for (const deadline = Date.now() + 30_000; !callId && Date.now() < deadline;) {
      const pending = await handle.query(pendingApprovalsQuery).catch(() => []);
      callId = pending.find((p) => p.name === 'sqrt')?.callId;
      if (!callId) await new Promise((r) => setTimeout(r, 100)); // polling for the approval request
    }
    expect(callId).toBeDefined();
    const approved = await runTs(
      ['client.ts', 'approve', handle.workflowId, callId!],
      cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, AGENT_TASK_QUEUE: taskQueue }),
    );
    expect(approved.stdout).toBe(`Approved ${callId}\n`);
    const outcome = await runOutcome(handle);
    expect(outcome.status).toBe('completed');
    const results = outcome.toolExecutions.map((e) => [e.name, e.result, e.error]);
    expect(results).toEqual([
      ['add', expect.stringContaining('not run: the policy "no-big-adds" forbids this call of add'), true],
      ['add', '6', false],
      ['stringLength', '1', false],
      ['stringLength', '2', false],
      ['stringLength', expect.stringContaining('the policy "two-lengths-a-run" forbids'), true],
      ['sqrt', '4', false],
    ]);
    const decided = (await keptEvents(t.client, handle.workflowId)).filter((e) => e.type === 'policy_decided');
    expect(decided.map((e) => e.type === 'policy_decided' && [e.tool, e.decision, e.policies, e.enforced])).toEqual([
      ['add', 'forbid', ['no-big-adds'], true],
      ['stringLength', 'forbid', ['two-lengths-a-run'], true],
      ['sqrt', 'ask', ['ask-for-roots'], true],
    ]);
  });
});

it('in log mode lets the forbidden call run and records what would have been decided', async () => {
  const model = await script([[['add', { a: 500, b: 1 }]]]);
  await withWorker(model.baseURL, 'log', async (taskQueue) => {
    const t = temporal();
    const handle = await startAgentRun(t.client, { message: 'go', tools: ['add'] }, { taskQueue });
    const outcome = await runOutcome(handle);
    expect(outcome.toolExecutions.map((e) => e.result)).toEqual(['501']);
    const decided = (await keptEvents(t.client, handle.workflowId)).filter((e) => e.type === 'policy_decided');
    expect(decided).toEqual([
      expect.objectContaining({ tool: 'add', decision: 'forbid', policies: ['no-big-adds'], enforced: false }),
    ]);
    // The decision is in the history: a local activity's marker, with the policy set's hash.
    const history = await handle.fetchHistory();
    const markers = (history.events ?? []).filter(
      (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
    );
    const recorded = markers.map((m) =>
      Buffer.from(m.markerRecordedEventAttributes!.details!.result!.payloads![0].data!).toString(),
    );
    expect(recorded.some((r) => /"mode":"log"/.test(r) && /"setHash":"[0-9a-f]{64}"/.test(r))).toBe(true);

    // Tried before enforcing: a set that lets adds up to 1,000 through changes that decision.
    const dir = mkdtempSync(join(tmpdir(), 'policies-next-'));
    writeFileSync(join(dir, 'next.cedar'), POLICIES.replace('decimal("100.0")', 'decimal("1000.0")'));
    const query = `WorkflowId = '${handle.workflowId}'`;
    let report: PolicyCheckReport | undefined;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
      report = tryPolicies({ path: dir }, await recordedDecisions(t.client, { query }));
      if (report.runsWithDecisions > 0) break;
      await new Promise((r) => setTimeout(r, 200)); // polling for visibility to list the closed run
    }
    expect(report!.changed).toEqual([
      expect.objectContaining({
        workflowId: handle.workflowId,
        step: 1,
        tool: 'add',
        before: 'forbid',
        after: 'permit',
      }),
    ]);
    const env = cleanEnv({ TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!, AGENT_TASK_QUEUE: taskQueue });
    // The same set as text, with the summary line a person reads.
    const text = await runTs(['client.ts', 'policy', 'check', dir, '--query', query], env);
    expect(text.stdout).toMatch(/add +forbid → permit/);
    expect(text.stdout).toMatch(/^1 of 1 decisions in 1 of 1 runs would change$/m);
  });
});

it("runs an agent called as a tool under its caller's policies as well as its own", async () => {
  // The lead asks the researcher; the researcher adds, which the lead's policies forbid.
  const model = await startModel((req) => {
    const researcher = req.messages[0]?.content === 'You research.';
    const tools = req.messages.filter((m) => m.role === 'tool');
    if (researcher) return tools.length ? answer(`researcher: ${toolResults(req)[0]}`) : call(['add', { a: 2, b: 3 }]);
    return tools.length ? answer(`lead: ${toolResults(req)[0]}`) : call(['researcher', { message: 'add 2 and 3' }]);
  });
  await withWorker(model.baseURL, 'enforce', async (taskQueue) => {
    const t = temporal();
    const handle = await startAgentRun(t.client, { message: 'go', agent: 'lead' }, { taskQueue });
    const outcome = await runOutcome(handle);
    const child = outcome.toolExecutions[0].childWorkflowId!;
    const childOutcome = await runOutcome(t.client.workflow.getHandle(child) as never);
    expect(childOutcome.toolExecutions.map((e) => [e.name, e.error])).toEqual([['add', true]]);
    expect(childOutcome.toolExecutions[0].result).toContain('the policy "leads-do-not-add" forbids this call of add');
    // The lead's own runs of add would be forbidden too; a researcher run alone adds.
    const alone = await runOutcome(
      await startAgentRun(t.client, { message: 'go', agent: 'researcher' }, { taskQueue }),
    );
    expect(alone.toolExecutions.map((e) => [e.name, e.result])).toEqual([['add', '5']]);
  });
});

withSandbox("runs a tenant's workspace commands without the hosts its policies do not grant", async () => {
  const server = createHttpServer((_req, res) => res.end('hello from the host\n'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  // HTTP by hand through the proxy the sandbox's HTTP_PROXY names (no curl needed).
  const command = `exec 3<>/dev/tcp/127.0.0.1/${PROXY_PORT} && printf 'GET http://localhost:${port}/ HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3`;
  const model = await script([[['bash', { command }]]]);
  const policies = `permit(principal, action, resource);
@id("globex-reaches-no-network") forbid(principal, action == Action::"grantNetwork", resource)
  when { principal has tenant && principal.tenant == "globex" };`;
  try {
    await withWorker(
      model.baseURL,
      'enforce',
      async (taskQueue) => {
        const t = temporal();
        const run = async (tenant?: string) => {
          const handle = await startAgentRun(
            t.client,
            { message: 'go', tools: ['bash'], workspace: { network: ['localhost'] }, ...(tenant ? { tenant } : {}) },
            { taskQueue },
          );
          return { handle, outcome: await runOutcome(handle) };
        };
        const acme = await run('acme');
        expect(acme.outcome.toolExecutions[0].result).toContain('hello from the host');
        const globex = await run('globex');
        expect(globex.outcome.toolExecutions[0].result).not.toContain('hello from the host');
        expect(globex.outcome.toolExecutions[0].error).toBe(false); // it ran, without the host
        const decided = (await keptEvents(t.client, globex.handle.workflowId)).filter(
          (e) => e.type === 'policy_decided',
        );
        expect(decided).toEqual([
          expect.objectContaining({
            tool: 'bash',
            host: 'localhost',
            decision: 'forbid',
            policies: ['globex-reaches-no-network'],
          }),
        ]);
      },
      policies,
    );
  } finally {
    server.close();
  }
});

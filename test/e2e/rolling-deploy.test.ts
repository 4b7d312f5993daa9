import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startAgentRun, runOutcome } from '../../src/client/run-agent';
import { deliverEvent } from '../../src/client/deliver-event';
import { createHttpApi } from '../../src/http/http-api';
import { cleanEnv, eventually, ROOT, runTs, startTs, type Started } from '../helpers/processes';
import { answer, call, closeScriptedModels, startModel } from '../helpers/scripted-model';
import { connectTestTemporal, type TestTemporal } from '../helpers/temporal';
import type { ChatRequest } from '../../src/testing/openai-compatible-server';

/**
 * A rolling deploy that kills nothing in flight, as a team runs one: two builds of a worker (two
 * processes, Worker Versioning on), the `deploy` and `replay` commands between them.
 * Build A serves a one-shot run that waits for an event, a conversation and a ticket workflow of the
 * team's own; build B has other instructions and another lookup result. After `deploy promote B`
 * the sleeping run finishes on A, the conversation moves to B, new runs go to B, A drains, and
 * stopping A loses nothing. A build C that cannot replay what is open on A is caught first.
 */
const FIXTURES = join(ROOT, 'test', 'fixtures', 'deploy');

/** The scripted model: its answers say which instructions (build) and which lookup result it saw. */
function deployModel(request: ChatRequest) {
  const system = String(request.messages[0]?.content ?? '');
  const lastUser = request.messages.map((m) => m.role).lastIndexOf('user');
  const asked = String(request.messages[lastUser]?.content ?? '');
  const results = request.messages.slice(lastUser + 1).filter((m) => m.role === 'tool');
  const sleeps = asked.startsWith('sleep');
  if (asked.startsWith('ticket')) return answer(`[${system}]`);
  // A wait the test ends (an event), not a timer: on a loaded machine a timer could end before
  // the deploy's checks have counted the run as open on A.
  if (sleeps && results.length === 0) return call(['wait_for_event', { name: 'warehouse', timeout: '10m' }]);
  if (results.length === (sleeps ? 1 : 0)) return call(['lookup', { order: '7' }]);
  return answer(`[${system}] ${String(results.at(-1)?.content)}`);
}

describe('a rolling deploy with Worker Versioning', () => {
  let t: TestTemporal;
  const workers: Started[] = [];
  beforeAll(async () => {
    t = await connectTestTemporal();
  });
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await closeScriptedModels();
    await t?.close();
  });

  it('finishes old runs on their build, moves the conversation, drains A, and replay --build catches build C', async () => {
    const model = await startModel(deployModel);
    const deployment = `shop-${randomUUID().slice(0, 8)}`;
    const env = cleanEnv({
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      AGENT_TASK_QUEUE: `deploy-${randomUUID()}`,
      AGENT_DEPLOYMENT_NAME: deployment,
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_API_KEY: 'deploy',
    });
    const cli = async (...args: string[]) => {
      const r = await runTs(['client.ts', ...args], env, 90_000);
      return { ...r, json: () => JSON.parse(r.stdout) };
    };
    const startBuild = async (build: string) => {
      const worker = await startTs([join(FIXTURES, 'deploy-worker.ts')], { ...env, AGENT_BUILD_ID: build }, /ready/);
      workers.push(worker);
      // The build exists in the deployment once its worker has polled.
      expect(
        await eventually(async () => {
          const s = await cli('deploy', 'status', '--json');
          return s.code === 0 && s.json().builds.some((b: { buildId: string }) => b.buildId === build);
        }, 30_000),
      ).toBe(true);
      return worker;
    };
    const counts: Record<string, unknown> = {};

    // Build A, made current.
    const a = await startBuild('A');
    const promoteA = await cli('deploy', 'promote', 'A');
    expect(promoteA.code).toBe(0);
    expect(promoteA.stdout).toMatch(/A is now the current build of shop-/);

    // In flight on A: a conversation and a ticket workflow of the team's own (the sleeping run follows).
    const conversation = `conv-${randomUUID()}`;
    const turn1 = await cli('send', conversation, 'where is order 7?', '--agent', 'support', '--json');
    expect(turn1.code).toBe(0);
    expect(turn1.json()).toMatchObject({ buildId: 'A', content: expect.stringContaining('build A') });
    expect(turn1.json().content).toContain('looked up by build A');
    const ticketId = `ticket-${randomUUID()}`;
    const ticket = await t.client.workflow.start('ticketWorkflow', {
      taskQueue: env.AGENT_TASK_QUEUE!,
      workflowId: ticketId,
      args: ['ticket 42: the parcel is late'],
    });

    // Build B starts beside A. Before promoting, replay what is open on A against the code about to ship.
    await startBuild('B');
    // The one-shot run starts now, on A (still current), and sleeps through the deploy.
    const sleeper = await startAgentRun(t.client, { name: 'support' }, 'sleep, then look up order 7', {
      taskQueue: env.AGENT_TASK_QUEUE!,
      workflowId: `sleeper-${randomUUID()}`,
    });
    expect(
      await eventually(async () => (await cli('status', sleeper.workflowId, '--json')).json().waits?.length === 1),
    ).toBe(true);
    const gateB = await cli('replay', '--build', 'A', '--workflows', join(FIXTURES, 'ticket-workflows.ts'), '--json');
    expect(gateB.code).toBe(0);
    const replayedB = gateB.json();
    expect(replayedB.failed).toEqual([]);
    expect(replayedB.replayed).toBeGreaterThanOrEqual(3); // the sleeping run, the conversation, the ticket
    // Build C changed the ticket workflow without patched(): the gate names it, exit 1.
    const gateC = await cli('replay', '--build', 'A', '--workflows', join(FIXTURES, 'ticket-workflows-c.ts'));
    expect(gateC.code).toBe(1);
    expect(gateC.stdout).toMatch(new RegExp(`✗ ${ticketId} \\(ticketWorkflow\\): .*[Nn]ondetermin`));
    counts.replayedOnA = replayedB.replayed;

    // Promote B: new runs go to B; the idle conversation is asked to move.
    const promoteB = await cli('deploy', 'promote', 'B', '--json');
    expect(promoteB.code).toBe(0);
    expect(promoteB.json()).toMatchObject({ buildId: 'B', previous: 'A', conversationsAsked: 1 });
    // Counted from Temporal's visibility, which catches up with the runs' builds a moment later on
    // a busy server: read until it has the sleeping run and the ticket on A (or 30 s have passed).
    const buildOf = (status: { builds: { buildId: string }[] }) => status.builds.find((b) => b.buildId === 'A');
    let draining = (await cli('deploy', 'status', '--json')).json();
    await eventually(async () => {
      draining = (await cli('deploy', 'status', '--json')).json();
      const a = buildOf(draining) as { openRuns?: number; openOther?: number } | undefined;
      return a?.openRuns === 1 && a?.openOther === 1;
    });
    const buildA = buildOf(draining);
    expect(draining.current).toBe('B');
    expect(buildA).toMatchObject({ status: 'draining', openRuns: 1, openOther: 1 });
    counts.drainingA = buildA;

    // The conversation's next turn runs on B (after its continue-as-new): B's instructions and tool.
    expect(await eventually(async () => (await cli('status', conversation, '--json')).json().buildId === 'B')).toBe(
      true,
    );
    const turn2 = (await cli('send', conversation, 'and now?', '--json')).json();
    expect(turn2).toMatchObject({ buildId: 'B', turn: 2 });
    expect(turn2.content).toContain('build B');
    expect(turn2.content).toContain('looked up by build B');
    expect(turn2.agentVersion).not.toBe(turn1.json().agentVersion);
    // New runs go to B.
    const fresh = (await cli('run', 'look up order 8', '--agent', 'support', '--json')).json();
    expect(fresh).toMatchObject({ status: 'completed', buildId: 'B' });
    expect(fresh.content).toContain('looked up by build B');

    // The sleeping run finishes on A: its later model calls carry A's instructions, its lookup is A's.
    await ticket.signal('closeTicket');
    await deliverEvent(t.client, sleeper.workflowId, 'warehouse', 'Slept: the parcel is in');
    expect(await ticket.result()).toContain('build A');
    const slept = await runOutcome(sleeper);
    expect(slept).toMatchObject({ status: 'completed', buildId: 'A' });
    expect(slept.content).toContain('looked up by build A');
    expect(slept.content).toContain('You are the support agent of build A.');
    const afterPromotion = model.requests.filter(
      (r) => r.messages.some((m) => m.role === 'tool' && String(m.content).includes('Slept')) || false,
    );
    expect(afterPromotion.every((r) => String(r.messages[0].content).includes('build A'))).toBe(true);

    // A drains: drain-wait returns, status says drained, and stopping A's worker loses nothing.
    const drained = await cli('deploy', 'drain-wait', 'A', '--timeout', '60s');
    expect(drained.code).toBe(0);
    expect(drained.stdout).toMatch(/A of shop-\S+ is drained/);
    const after = (await cli('deploy', 'status', '--json')).json();
    const drainedA = after.builds.find((b: { buildId: string }) => b.buildId === 'A');
    expect(drainedA).toMatchObject({ status: 'drained', openRuns: 0, openConversations: 0, openOther: 0 });
    // A ramp (here back to A, whose workers still run): a share of new runs, then none.
    const ramp = await cli('deploy', 'ramp', 'A', '10');
    expect(ramp.code).toBe(0);
    expect(ramp.stdout).toMatch(/A now gets 10% of the new runs of shop-/);
    expect((await cli('deploy', 'status', '--json')).json()).toMatchObject({
      current: 'B',
      ramping: { buildId: 'A', percent: 10 },
    });
    expect((await cli('deploy', 'ramp', 'A', '0')).stdout).toMatch(/no build of shop-\S+ is ramping now \(A was\)/);
    expect((await cli('deploy', 'ramp', 'A', '120')).code).toBe(2);
    a.kill('SIGTERM');
    await a.exited;
    const turn3 = (await cli('send', conversation, 'still there?', '--json')).json();
    expect(turn3).toMatchObject({ buildId: 'B', turn: 3, status: 'completed' });
    const failed = await t.client.workflow.count(
      `TaskQueue = '${env.AGENT_TASK_QUEUE}' AND ExecutionStatus = 'Failed'`,
    );
    expect(failed.count).toBe(0);

    // Status and list name the build and the agent version.
    const status = (await cli('status', sleeper.workflowId, '--json')).json();
    expect(status).toMatchObject({ buildId: 'A', agentVersion: slept.agentVersion });
    expect((await cli('status', sleeper.workflowId)).stdout).toMatch(/agent version av-[0-9a-f]{16}, build A/);
    expect(
      await eventually(async () => {
        const listed = (await cli('list', '--version', slept.agentVersion!, '--json')).json();
        return listed.some((r: { workflowId: string }) => r.workflowId === sleeper.workflowId);
      }),
    ).toBe(true);

    // The HTTP API: the deployment's status for anyone it serves; promoting only when it manages deployments.
    const api = createHttpApi({ client: t.client, taskQueue: env.AGENT_TASK_QUEUE! });
    api.listen(0, '127.0.0.1');
    await once(api, 'listening');
    const base = `http://127.0.0.1:${(api.address() as AddressInfo).port}/deployments/${deployment}`;
    try {
      const http = await (await fetch(base)).json();
      expect(http).toMatchObject({ deployment, current: 'B' });
      const refused = await fetch(`${base}/promote`, { method: 'POST', body: JSON.stringify({ buildId: 'A' }) });
      expect(refused.status).toBe(403);
      expect((await refused.json()).error).toMatch(/AGENT_HTTP_DEPLOYMENTS=manage/);
      const wait = await fetch(`${base}/builds/A/drain-wait?wait=1s`, { method: 'POST' });
      expect(wait.status).toBe(200);
    } finally {
      api.close();
    }

    counts.drainedA = drainedA;
    counts.modelCalls = model.requests.length;
    console.log(`rolling deploy: ${JSON.stringify(counts)}`);
  }, 240_000);
});

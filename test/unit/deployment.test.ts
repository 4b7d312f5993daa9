import type { WorkerOptions } from '@temporalio/worker';
import { workerSettings } from '../../src/worker/settings';
import { parseDeployArgs } from '../../src/cli/deploy-command';
import { parseReplayArgs } from '../../src/cli/replay-command';
import { pinnedQuery } from '../../src/client/deployments';
import { AgentsPlugin } from '../../src/worker/agents-plugin';
import {
  carryOver,
  startConversation,
  startTurn,
  turnResult,
  withResolvedAgent,
} from '../../src/core/conversation/conversation';
import { conversationSearchValues, runSearchValues } from '../../src/core/run/search-attributes';
import { startRun } from '../../src/core/run/agent-loop';
import type { ResolvedAgent } from '../../src/core/state/agents';
import type { ToolInfo } from '../../src/core/messages/tool-info';

/** Worker Versioning: the plugin's deployment, and how a conversation takes a new build's agent. */

const tool = (name: string, extra: Partial<ToolInfo> = {}): ToolInfo => ({
  name,
  immediate: false,
  timeoutMs: 1000,
  retry: { maximumAttempts: 1, initialIntervalMs: 1000 },
  ...extra,
});

describe('the plugin’s deployment', () => {
  const configured = (plugin: AgentsPlugin, options: Partial<WorkerOptions> = {}) =>
    plugin.configureWorker({ taskQueue: 'agents', ...options } as WorkerOptions);

  it('turns on Worker Versioning from AGENT_DEPLOYMENT_NAME and AGENT_BUILD_ID, Pinned by default', () => {
    const settings = workerSettings({}, { AGENT_DEPLOYMENT_NAME: 'support', AGENT_BUILD_ID: '2026-11-26.1' });
    expect(settings.deployment).toEqual({ name: 'support', buildId: '2026-11-26.1' });
    expect(configured(new AgentsPlugin({}, settings)).workerDeploymentOptions).toEqual({
      version: { deploymentName: 'support', buildId: '2026-11-26.1' },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    });
  });

  it('leaves a worker unversioned without them, and the option wins over the environment', () => {
    expect(configured(new AgentsPlugin({}, workerSettings({}, {}))).workerDeploymentOptions).toBeUndefined();
    const env = { AGENT_DEPLOYMENT_NAME: 'support', AGENT_BUILD_ID: 'b1' };
    expect(workerSettings({ deployment: false }, env).deployment).toBeUndefined();
    const own = { name: 'billing', buildId: 'b2', defaultVersioningBehavior: 'AUTO_UPGRADE' as const };
    expect(
      configured(new AgentsPlugin({ deployment: own }, workerSettings({ deployment: own }, env)))
        .workerDeploymentOptions,
    ).toMatchObject({
      version: { deploymentName: 'billing', buildId: 'b2' },
      defaultVersioningBehavior: 'AUTO_UPGRADE',
    });
  });

  it('refuses half a deployment, odd names, and a worker whose own versioning says otherwise', () => {
    expect(() => workerSettings({}, { AGENT_DEPLOYMENT_NAME: 'support' })).toThrow(/AGENT_BUILD_ID is not set/);
    expect(() => workerSettings({}, { AGENT_BUILD_ID: 'b1' })).toThrow(/AGENT_DEPLOYMENT_NAME is not set/);
    expect(() => workerSettings({}, { AGENT_DEPLOYMENT_NAME: 'a:b', AGENT_BUILD_ID: 'b1' })).toThrow(/no "\." or ":"/);
    // Temporal refuses a deployment name with a dot (it joins a name and a build); a build id may have one.
    expect(() => workerSettings({}, { AGENT_DEPLOYMENT_NAME: 'a.b', AGENT_BUILD_ID: 'b1' })).toThrow(
      /the deployment name "a\.b" must be/,
    );
    expect(workerSettings({}, { AGENT_DEPLOYMENT_NAME: 'ab', AGENT_BUILD_ID: 'v1.2' }).deployment).toMatchObject({
      buildId: 'v1.2',
    });
    expect(() => workerSettings({ deployment: { name: 'x', buildId: '' } }, {})).toThrow(/AgentsPlugin: deployment/);
    const plugin = new AgentsPlugin({}, workerSettings({ deployment: { name: 'support', buildId: 'b1' } }, {}));
    const other = {
      version: { deploymentName: 'support', buildId: 'b9' },
      useWorkerVersioning: true as const,
      defaultVersioningBehavior: 'PINNED' as const,
    };
    expect(() => configured(plugin, { workerDeploymentOptions: other })).toThrow(/support:b9.*support:b1/);
  });
});

describe('a conversation on another build', () => {
  const agentOn = (instructions: string, version: string, tools = [tool('lookup')]): ResolvedAgent => ({
    settings: { name: 'support', instructions },
    tools,
    version,
  });

  it('takes the new build’s instructions, tools and version under the options it was started with', () => {
    let conv = startConversation({ agent: 'support', modelSettings: { temperature: 0 } });
    conv = withResolvedAgent(conv, agentOn('You are A.', 'av-a'));
    expect(conv.options.system).toBe('You are A.');
    // A turn made lookup need approval: the new build's lookup still does.
    conv = { ...conv, tools: conv.tools!.map((t) => ({ ...t, needsApproval: true })), buildId: 'A' };
    const carried = startConversation({ ...conv.options, carry: { ...carryOver(conv, 'run-1'), refreshAgent: true } });
    expect(carried.buildId).toBeUndefined(); // each run has its own build
    expect(carried.given).toEqual({ agent: 'support', modelSettings: { temperature: 0 } });
    const moved = withResolvedAgent(
      { ...carried, buildId: 'B' },
      agentOn('You are B.', 'av-b', [tool('lookup'), tool('new')]),
    );
    expect(moved.options).toMatchObject({ system: 'You are B.', modelSettings: { temperature: 0 } });
    expect(moved.tools!.map((t) => [t.name, t.needsApproval === true])).toEqual([
      ['lookup', true],
      ['new', false],
    ]);
    expect(moved.agentVersion).toBe('av-b');
    const turn = startTurn(moved, { message: 'hi' });
    expect(turn.messages[0]).toMatchObject({ role: 'system', content: 'You are B.' });
    expect(turn).toMatchObject({ agentVersion: 'av-b', buildId: 'B' });
  });

  it('stays on the agent a handoff moved it to', () => {
    let conv = withResolvedAgent(startConversation({ agent: 'triage' }), agentOn('You triage.', 'av-t'));
    conv = { ...conv, options: { ...conv.options, agent: 'billing', system: 'You bill.' } }; // after a handoff
    const billing: ResolvedAgent = {
      settings: { name: 'billing', instructions: 'You bill, v2.' },
      tools: [],
      version: 'av-b',
    };
    const moved = withResolvedAgent(conv, billing);
    expect(moved.options).toMatchObject({ agent: 'billing', system: 'You bill, v2.' });
  });

  it('shows the version in the search attributes and the build in results', () => {
    const state = { ...startRun({ message: 'hi', agent: 'support' }, [], 'av-1'), buildId: 'B' };
    expect(runSearchValues(state, {}).AgentVersion).toBe('av-1');
    const usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    expect(
      conversationSearchValues('idle', { usage, lastTurnIterations: 0 }, { agent: 'support', agentVersion: 'av-1' })
        .AgentVersion,
    ).toBe('av-1');
    expect(turnResult(state, 'conv-1', 1, { error: 'x', errorType: 'Y' })).toMatchObject({ buildId: 'B' });
  });
});

describe('deploy arguments', () => {
  const env = { AGENT_DEPLOYMENT_NAME: 'shop' };
  it('take the deployment from the flag or AGENT_DEPLOYMENT_NAME, and refuse what they cannot use', () => {
    expect(parseDeployArgs(['status'], env)).toEqual({ action: 'status', deployment: 'shop', json: false });
    expect(parseDeployArgs(['ramp', 'b2', '25%', '--deployment', 'other'], env)).toMatchObject({
      action: 'ramp',
      deployment: 'other',
      buildId: 'b2',
      percent: 25,
    });
    expect(parseDeployArgs(['drain-wait', 'b1', '--timeout', '2h'], env)).toMatchObject({ timeoutMs: 7_200_000 });
    expect(() => parseDeployArgs(['status'], {})).toThrow(/AGENT_DEPLOYMENT_NAME/);
    expect(() => parseDeployArgs(['promote'], env)).toThrow(/takes <buildId>/);
    expect(() => parseDeployArgs(['ramp', 'b2', '101'], env)).toThrow(/0 to 100/);
    expect(() => parseDeployArgs(['rollback'], env)).toThrow(/unknown deploy action/);
  });

  it('replay --build names the open workflows on a build; --build and --since exclude each other', () => {
    expect(parseReplayArgs(['--build', 'b1'], env).query).toBe(
      "TemporalWorkerDeploymentVersion = 'shop:b1' AND ExecutionStatus = 'Running'",
    );
    expect(pinnedQuery('shop', 'b1')).toBe(
      "TemporalWorkerDeploymentVersion = 'shop:b1' AND TemporalWorkflowVersioningBehavior = 'Pinned' AND ExecutionStatus = 'Running'",
    );
    expect(() => parseReplayArgs(['--build', 'b1', '--since', '7d'], env)).toThrow(/exclude each other/);
    expect(() => parseReplayArgs(['--build', 'b1'], {})).toThrow(/--deployment/);
    expect(() => parseReplayArgs(['--workflows', 'no/such/module'], env)).toThrow(/--workflows: no module/);
  });
});

describe('deployment commands', () => {
  it('refuse a deployment name Temporal would refuse, with a sentence, before asking the server', async () => {
    const { deploymentStatus, waitForDrain } = await import('../../src/client/deployments');
    const client = {} as never; // never reached: the name is checked first
    await expect(deploymentStatus(client, 'a.b')).rejects.toMatchObject({
      kind: 'invalid',
      message: 'the deployment "a.b" must be named with 1-255 letters, digits or _ - / @ + (no "." or ":")',
    });
    await expect(waitForDrain(client, 'a.b', 'b1', { timeoutMs: 1000 })).rejects.toMatchObject({ kind: 'invalid' });
  });
});

describe('deploy status', () => {
  it('counts what is pinned to a build now, by each workflow’s latest run, not what visibility lists while conversations move', async () => {
    const { deploymentStatus } = await import('../../src/client/deployments');
    const PINNED = 1; // VERSIONING_BEHAVIOR_PINNED
    const on = (buildId: string) => ({ deploymentVersion: { deploymentName: 'shop', buildId }, behavior: PINNED });
    // Visibility, mid-move: c1 listed twice (its old run and its successor), c2 already moved to B, r1 a run.
    const listed = [
      { workflowId: 'c1', type: 'conversationWorkflow' },
      { workflowId: 'c1', type: 'conversationWorkflow' },
      { workflowId: 'c2', type: 'conversationWorkflow' },
      { workflowId: 'r1', type: 'agentWorkflow' },
    ];
    const latest: Record<string, { type: string; status: string; versioningInfo: object }> = {
      c1: { type: 'conversationWorkflow', status: 'RUNNING', versioningInfo: on('A') },
      c2: { type: 'conversationWorkflow', status: 'RUNNING', versioningInfo: on('B') },
      r1: { type: 'agentWorkflow', status: 'RUNNING', versioningInfo: on('A') },
    };
    const client = {
      options: { namespace: 'default' },
      workflowService: {
        describeWorkerDeployment: async () => ({
          workerDeploymentInfo: {
            routingConfig: { currentDeploymentVersion: { buildId: 'B' } },
            versionSummaries: [{ deploymentVersion: { buildId: 'A' }, createTime: { seconds: 1 } }],
          },
        }),
      },
      workflow: {
        list: ({ query }: { query: string }) =>
          (async function* () {
            if (query.includes("'shop:A'")) yield* listed;
          })(),
        getHandle: (id: string) => ({
          describe: async () => ({
            type: latest[id].type,
            status: { name: latest[id].status },
            raw: { workflowExecutionInfo: { versioningInfo: latest[id].versioningInfo } },
          }),
        }),
      },
    } as never;
    const report = await deploymentStatus(client, 'shop');
    expect(report.builds).toEqual([
      expect.objectContaining({ buildId: 'A', status: 'draining', openRuns: 1, openConversations: 1, openOther: 0 }),
    ]);
  });
});

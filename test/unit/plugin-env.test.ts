import { randomBytes } from 'node:crypto';
import { AgentsPlugin } from '../../src/worker/agents-plugin';

/** A worker built with Worker.create and the plugin reads the same variables as createAgentWorker and connectTemporal. */

const KEYS = `k1:${randomBytes(32).toString('base64')}`;

function withEnv<T>(vars: Record<string, string>, work: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return work();
  } finally {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

const codecs = (plugin: AgentsPlugin) =>
  plugin.configureClient({ namespace: 'default' }).dataConverter?.payloadCodecs?.length ?? 0;

it('encrypts with AGENT_ENCRYPTION_KEYS when no keys are given, and not with encryptionKeys: []', () => {
  expect(codecs(new AgentsPlugin({}))).toBe(0);
  expect(withEnv({ AGENT_ENCRYPTION_KEYS: KEYS }, () => codecs(new AgentsPlugin({})))).toBe(1);
  expect(withEnv({ AGENT_ENCRYPTION_KEYS: KEYS }, () => codecs(new AgentsPlugin({ encryptionKeys: [] })))).toBe(0);
});

it('refuses a malformed AGENT_MCP_CONFIG at once, naming it', () => {
  expect(() => withEnv({ AGENT_MCP_CONFIG: '/nonexistent/mcp.json' }, () => new AgentsPlugin({}))).toThrow(/mcp\.json/);
});

it('refuses a named model that is neither a model name nor an AI SDK language model', () => {
  expect(() => new AgentsPlugin({ models: { smart: { id: 'gpt' } as never } })).toThrow(
    /models\.smart must be a model name \("anthropic:claude-sonnet-5"\) or an AI SDK language model/,
  );
  expect(() => new AgentsPlugin({ models: { smart: 'anthropic:claude-x' } })).not.toThrow();
});

it('holds as many workflow tasks at once as AGENT_WORKFLOW_TASK_SLOTS or the option say, the worker’s own setting first', () => {
  const slots = (plugin: AgentsPlugin, options: Record<string, unknown> = {}) =>
    (plugin.configureWorker({ taskQueue: 'q', ...options } as never) as unknown as Record<string, unknown>)
      .maxConcurrentWorkflowTaskExecutions;
  expect(slots(new AgentsPlugin({}))).toBeUndefined(); // Temporal's default
  expect(withEnv({ AGENT_WORKFLOW_TASK_SLOTS: '2' }, () => slots(new AgentsPlugin({})))).toBe(2);
  expect(slots(new AgentsPlugin({ workflowTaskSlots: 3 }))).toBe(3);
  expect(slots(new AgentsPlugin({ workflowTaskSlots: 2 }), { maxConcurrentWorkflowTaskExecutions: 40 })).toBe(40);
  // A tuner and the slot counts exclude each other (the SDK refuses both): a tuner is left alone.
  expect(slots(new AgentsPlugin({ workflowTaskSlots: 2 }), { tuner: { tunerOptions: {} } })).toBeUndefined();
  expect(() => withEnv({ AGENT_WORKFLOW_TASK_SLOTS: 'two' }, () => new AgentsPlugin({}))).toThrow(
    /AGENT_WORKFLOW_TASK_SLOTS must be a whole number .*got "two"/,
  );
});

it('names the fleet’s task queue from AGENT_FLEET_TASK_QUEUE or the option, refusing an empty one', () => {
  expect(new AgentsPlugin({}).fleetTaskQueue).toBe('durable-agents-fleet');
  expect(withEnv({ AGENT_FLEET_TASK_QUEUE: 'fleet-x' }, () => new AgentsPlugin({}).fleetTaskQueue)).toBe('fleet-x');
  expect(new AgentsPlugin({ fleetTaskQueue: 'mine' }).fleetTaskQueue).toBe('mine');
  expect(() => new AgentsPlugin({ fleetTaskQueue: ' ' })).toThrow(/fleetTaskQueue must be a task queue name/);
});

it('leaves the fleet’s queue unversioned on a versioned worker (every deployment of a namespace shares it)', () => {
  const plugin = new AgentsPlugin({ bundleCache: false, deployment: { name: 'support', buildId: 'b1' } });
  const versioning = (taskQueue: string) =>
    (plugin.configureWorker({ taskQueue } as never) as unknown as Record<string, unknown>).workerDeploymentOptions;
  expect(versioning('agents')).toMatchObject({ version: { deploymentName: 'support', buildId: 'b1' } });
  expect(versioning('durable-agents-fleet')).toBeUndefined();
});

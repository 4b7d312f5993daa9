import { randomUUID } from 'node:crypto';
import { seededMemoryDir } from './pglite-template';
import { Client } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { connectClient } from '../../src/connection/client-connection';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { payloadStorageFromEnv } from '../../src/storage/payload-storage';
import { installRuntimeLogging } from '../../src/telemetry/logging';
import type { ModelConfig } from '../../src/activities';
import type { AgentDefinition } from '../../src/agents/define-agent';
import type { AgentInput } from '../../src/core/state/run-options';
import { createAgentWorker, type AgentWorkerOptions } from '../../src/worker/create-agent-worker';
import { runOutcome, startAgentRun, type RunOutcome } from '../../src/client/run-agent';
import type { ToolRegistry } from '../../src/tools/registry';
import type { ToolProvider } from '../../src/tools/tool-provider';
import type { McpServers } from '../../src/tools/mcp-client/mcp-config';
import { exampleToolRegistry } from '../../scripts/demo-agents';
import { closeScriptedModels } from './scripted-model';

/** Connections to the suite's dev server (started in global-setup). */
export interface TestTemporal {
  client: Client;
  nativeConnection: NativeConnection;
  close(): Promise<void>;
}

export async function connectTestTemporal(): Promise<TestTemporal> {
  installRuntimeLogging('ERROR');
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  if (!address)
    throw new Error('TEST_TEMPORAL_ADDRESS is not set: run the tests through jest (global-setup starts the server)');
  const connection = await connectClient({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  return {
    // The workers' payload store (AGENT_PAYLOAD_STORE, set by the global setup): clients read what they stored.
    client: new Client({
      connection: connection.connection,
      dataConverter: { externalStorage: payloadStorageFromEnv(process.env)?.storage },
    }),
    nativeConnection,
    close: async () => {
      await connection.close();
      await nativeConnection.close();
    },
  };
}

/**
 * Registers the jest hooks of a workflow test file: one connection for the file, scripted models
 * closed after each test. Returns a getter for the connection (available inside tests).
 */
export function useTestTemporal(): () => TestTemporal {
  let t: TestTemporal | undefined;
  beforeAll(async () => {
    t = await connectTestTemporal();
  });
  afterEach(closeScriptedModels);
  afterAll(async () => t?.close());
  return () => {
    if (!t) throw new Error('useTestTemporal: the connection exists only inside tests');
    return t;
  };
}

/** Model settings pointing the worker at a scripted server. */
export function modelAt(baseURL: string): ModelConfig {
  return { baseURL, apiKey: 'test-key', model: 'scripted', requestTimeoutMs: 10_000, configured: true };
}

/** A worker on a fresh task queue, using the suite's prebuilt workflow bundle. */
export async function createTestWorker(
  t: TestTemporal,
  options: {
    baseURL: string;
    registry?: ToolRegistry;
    taskQueue?: string;
    toolProvider?: ToolProvider;
    agents?: AgentDefinition<any>[];
    mcpServers?: McpServers;
    mcpTokenFile?: string;
    namespace?: string;
    searchAttributes?: AgentWorkerOptions['searchAttributes'];
    /** Model settings over the scripted OpenAI endpoint's (another provider, another default model). */
    model?: Partial<ModelConfig>;
    /** The worker's named models. */
    models?: AgentWorkerOptions['models'];
    blobStore?: AgentWorkerOptions['blobStore'];
    payloadStorage?: AgentWorkerOptions['payloadStorage'];
    encryptionKeys?: AgentWorkerOptions['encryptionKeys'];
    guardrails?: AgentWorkerOptions['guardrails'];
    streaming?: AgentWorkerOptions['streaming'];
    rateLimits?: AgentWorkerOptions['rateLimits'];
    credentialsFile?: string;
    memory?: AgentWorkerOptions['memory'];
    /** Default: the test run's (AGENT_FLEET_TASK_QUEUE); with encryption keys, one of the worker's own. */
    fleetTaskQueue?: string;
  },
): Promise<{ worker: Worker; taskQueue: string }> {
  const taskQueue = options.taskQueue ?? `test-${randomUUID()}`;
  // An embedded store's directory starts as a copy of a ready database (see pglite-template.ts).
  const memory = options.memory as { dir?: string } | undefined;
  if (memory && typeof memory.dir === 'string' && !('recall' in memory)) await seededMemoryDir(memory.dir);
  const worker = await createAgentWorker({
    connection: t.nativeConnection,
    taskQueue,
    // The example tools (calculator, weather) unless the test brings its own.
    registry: options.registry ?? exampleToolRegistry(),
    agents: options.agents,
    toolProvider: options.toolProvider,
    mcpServers: options.mcpServers,
    ...(options.mcpTokenFile ? { mcpTokenFile: options.mcpTokenFile } : {}),
    namespace: options.namespace,
    searchAttributes: options.searchAttributes,
    model: { ...modelAt(options.baseURL), ...options.model },
    models: options.models,
    blobStore: options.blobStore,
    payloadStorage: options.payloadStorage,
    encryptionKeys: options.encryptionKeys,
    guardrails: options.guardrails,
    streaming: options.streaming,
    rateLimits: options.rateLimits,
    ...(options.credentialsFile ? { credentialsFile: options.credentialsFile } : {}),
    ...(options.memory ? { memory: options.memory } : {}),
    // A worker with keys refuses the other tests' plaintext ledgers: it serves a fleet queue of its own.
    ...(options.fleetTaskQueue || options.encryptionKeys?.length
      ? { fleetTaskQueue: options.fleetTaskQueue ?? `${taskQueue}-fleet` }
      : {}),
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1s',
  });
  return { worker, taskQueue };
}

/** Runs one agent conversation on a fresh worker and returns its outcome. */
export async function runAgent(
  t: TestTemporal,
  input: AgentInput,
  options: { baseURL: string; registry?: ToolRegistry; workflowId?: string },
): Promise<RunOutcome> {
  const { worker, taskQueue } = await createTestWorker(t, options);
  return worker.runUntil(async () =>
    runOutcome(await startAgentRun(t.client, input, { taskQueue, workflowId: options.workflowId })),
  );
}

/**
 * Registers a namespace of its own (with none of the agent search attributes, as a production
 * namespace starts) and returns a worker on it, once the namespace takes workers.
 */
export async function createTestWorkerInNewNamespace(
  t: TestTemporal,
  options: Omit<Parameters<typeof createTestWorker>[1], 'namespace'>,
): Promise<{ worker: Worker; taskQueue: string; namespace: string; client: Client }> {
  const namespace = `bare-${randomUUID().slice(0, 8)}`;
  await t.client.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  // The namespace takes a moment to be usable after it is registered.
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await t.client.workflowService.describeNamespace({ namespace });
      const { worker, taskQueue } = await createTestWorker(t, { ...options, namespace });
      const client = new Client({
        connection: t.client.connection,
        namespace,
        dataConverter: t.client.options.dataConverter,
      });
      return { worker, taskQueue, namespace, client };
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

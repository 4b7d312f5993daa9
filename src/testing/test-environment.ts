import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, type Worker, type WorkerOptions } from '@temporalio/worker';
import type { ConversationOptions } from '../core/conversation/conversation-state';
import type { ConversationTurnResult } from '../core/state/run-results';
import { sendMessage, type MessageRequest } from '../client/conversations';
import { runOutcome, startAgentRun, type AgentRunHandle, type RunOutcome, type RunRequest } from '../client/run-agent';
import { startDevServer, type DevServer } from '../connection/dev-server';
import { installRuntimeLogging } from '../telemetry/logging';
import { clientSettings } from '../connection/settings';
import { payloadStorageFromEnv } from '../storage/payload-storage';
import { AgentsPlugin } from '../worker/agents-plugin';
import { createAgentWorker } from '../worker/create-agent-worker';
import type { AgentDefinition } from '../agents/define-agent';
import type { ModelConfig, NamedModels } from '../models/model-config';
import type { AnyToolDefinition } from '../tools/define-tool';
import type { ToolRegistry } from '../tools/registry';
import type { GuardrailDefinition } from '../agents/define-guardrail';
import type { ScriptedModel } from './scripted-model';

/** Options of {@link createTestEnvironment}. */
export interface TestEnvironmentOptions {
  /** The agents under test (see `defineAgent`); their tools come with them. */
  agents?: readonly AgentDefinition<any>[];
  /** Tools besides the agents' own, e.g. for runs without a named agent. */
  tools?: ToolRegistry | readonly AnyToolDefinition[];
  /** The model: a {@link ScriptedModel} (started and stopped here), or model settings of your own. */
  model: ScriptedModel | ModelConfig;
  /** The worker's named models (see `AgentsPluginOptions.models`). */
  models?: NamedModels;
  /** Guardrails runs may name, besides the agents' own. */
  guardrails?: readonly GuardrailDefinition[];
  /** The task queue (default: a fresh one). */
  taskQueue?: string;
  /**
   * A Temporal server to use instead of starting one (`host:port`); its namespace with `namespace`.
   * Default: a dev server of the Temporal CLI in memory, started here and stopped by `close()`,
   * found as the embedded default finds it (`TEMPORAL_CLI_PATH`, `PATH`, `.temporal/cli`, `~/.temporalio/bin`).
   */
  address?: string;
  namespace?: string;
  /** Other worker options (concurrency, ...). */
  workerOptions?: Omit<Partial<WorkerOptions>, 'connection' | 'namespace' | 'taskQueue' | 'plugins'>;
}

/** A Temporal server, a worker with the agents, and the calls a test makes. */
export interface TestEnvironment {
  /** A client of the environment's server (for `deliverEvent`, `readStatus`, queries, ...). */
  client: Client;
  taskQueue: string;
  /** Runs an agent and returns its outcome, as `runOutcome` gives it. */
  run<O = unknown>(input: string | RunRequest, options?: { workflowId?: string }): Promise<RunOutcome<O>>;
  /** Starts a run and returns its handle (`runOutcome(handle)` waits for it). */
  startRun<O = unknown>(input: string | RunRequest, options?: { workflowId?: string }): Promise<AgentRunHandle<O>>;
  /** Sends a conversation message and returns the turn's result; the first message opens the conversation with `options`. */
  send(
    conversationId: string,
    message: string | MessageRequest,
    options?: ConversationOptions,
  ): Promise<ConversationTurnResult>;
  /** Stops the worker, the server it started and the scripted model. */
  close(): Promise<void>;
}

/** The agent workflows' bundle, built once per process: every environment's worker reuses it. */
let bundle: Promise<{ code: string }> | undefined;

function workflowBundle(): Promise<{ code: string }> {
  bundle ??= bundleWorkflowCode({
    // The plugin tells the bundler where the agent workflows are, as it does for a worker.
    plugins: [
      new AgentsPlugin({
        model: { baseURL: 'http://127.0.0.1:1', apiKey: '-', model: '-', requestTimeoutMs: 1, configured: true },
      }),
    ],
    workflowsPath: require.resolve('../workflows/bundle'),
    logger: quietLogger,
  }).catch((err: unknown) => {
    bundle = undefined;
    throw err;
  });
  return bundle;
}

/**
 * What a test of your agents needs, in one call: a Temporal dev server (in memory), a worker with
 * your agents and tools on a fresh task queue, and a client. The first environment of a process
 * takes a few seconds (the server starts, the workflows are bundled); runs then take as long as
 * your tools. Call `close()` when done (e.g. in `after`/`afterAll`).
 *
 * ```ts
 * const env = await createTestEnvironment({ agents: [support], model: scriptedModel([...]) });
 * const outcome = await env.run({ agent: 'support', message: 'Where is order A-1?' });
 * await env.close();
 * ```
 */
export async function createTestEnvironment(options: TestEnvironmentOptions): Promise<TestEnvironment> {
  // The environment's log level and Temporal CLI (AGENT_LOG_LEVEL, TEMPORAL_CLI_PATH); nothing else of it.
  const settings = clientSettings();
  installRuntimeLogging('ERROR', { ...settings.logging, handleSignals: false });
  const scripted = isScripted(options.model) ? options.model : undefined;
  let server: DevServer | undefined;
  let nativeConnection: NativeConnection | undefined;
  let connection: Connection | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    if (scripted) {
      await scripted.start();
      cleanups.push(() => scripted.close());
    }
    const [started, code] = await Promise.all([
      options.address ? Promise.resolve(undefined) : startDevServer({ readyTimeoutMs: 30_000 }, settings.env),
      workflowBundle(),
    ]);
    server = started;
    if (server) cleanups.push(() => server!.stop());
    const address = options.address ?? server!.address;
    const namespace = options.namespace ?? 'default';
    nativeConnection = await NativeConnection.connect({ address });
    cleanups.push(() => nativeConnection!.close());
    connection = await Connection.connect({ address });
    cleanups.push(() => connection!.close());
    // Large payloads (a big tool output) go to a store in a temporary directory that worker and client share.
    const payloadDir = mkdtempSync(join(tmpdir(), 'durable-agents-test-'));
    cleanups.push(async () => rmSync(payloadDir, { recursive: true, force: true }));
    const payloads = payloadStorageFromEnv({ AGENT_PAYLOAD_STORE: payloadDir })!.storage;
    const client = new Client({ connection, namespace, dataConverter: { externalStorage: payloads } });
    const taskQueue = options.taskQueue ?? `test-${randomUUID()}`;
    const model = scripted ? scripted.config() : (options.model as ModelConfig);
    const worker: Worker = await createAgentWorker({
      connection: nativeConnection,
      namespace,
      taskQueue,
      agents: options.agents,
      registry: options.tools,
      model,
      models: options.models,
      guardrails: options.guardrails,
      workflowBundle: code,
      shutdownGraceTime: '1s',
      payloadStorage: payloads,
      workerOptions: options.workerOptions,
    });
    const running = worker.run();
    cleanups.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    const startRun = <O>(input: string | RunRequest, o: { workflowId?: string } = {}) =>
      startAgentRun<O>(client, typeof input === 'string' ? { message: input } : input, {
        taskQueue,
        workflowId: o.workflowId,
      });
    return {
      client,
      taskQueue,
      startRun,
      run: async <O>(input: string | RunRequest, o?: { workflowId?: string }) =>
        runOutcome<O>(await startRun<O>(input, o)),
      send: (conversationId, message, conversationOptions) =>
        sendMessage(client, conversationId, typeof message === 'string' ? { message } : message, {
          taskQueue,
          options: conversationOptions,
        }),
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

function isScripted(model: ScriptedModel | ModelConfig): model is ScriptedModel {
  return typeof (model as ScriptedModel).start === 'function';
}

/** The bundler's progress is not a test's business; its errors still throw. */
const quietLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: (message: string, meta?: Record<string, unknown>) => console.error(message, meta ?? ''),
  log: () => undefined,
};

import type { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { ModelConfig } from '../activities';
import type { AgentDefinition } from '../agents/define-agent';
import { AgentsPlugin, type AgentsPluginOptions } from './agents-plugin';
import type { ToolRegistry } from '../tools/registry';
import type { AnyToolDefinition } from '../tools/define-tool';
import type { ToolProvider } from '../tools/tool-provider';
import type { McpServers } from '../tools/mcp-client/mcp-config';
import { workerSettings, type WorkerSettings } from './settings';

/** Options of {@link createAgentWorker}. */
export interface AgentWorkerOptions {
  connection: NativeConnection;
  /** The client activities read conversations with. Default: the worker's own client. */
  client?: Client;
  namespace?: string;
  /** Default: `AGENT_TASK_QUEUE`, else `agents`. */
  taskQueue?: string;
  /** Named agents (see `defineAgent`). */
  agents?: readonly AgentDefinition<any>[];
  /** Tools besides the agents' own (default: none). */
  registry?: ToolRegistry | readonly AnyToolDefinition[];
  /** Chooses extra (dynamic) tools for each model call from the conversation. */
  toolProvider?: ToolProvider;
  /** Guardrails runs may name, besides the agents' own (see `AgentsPluginOptions.guardrails`). */
  guardrails?: AgentsPluginOptions['guardrails'];
  /** How model calls stream their text (see `AgentsPluginOptions.streaming`). */
  streaming?: AgentsPluginOptions['streaming'];
  /** Policies on the runs' tool calls (see `AgentsPluginOptions.policies`); default `AGENT_POLICIES`. */
  policies?: AgentsPluginOptions['policies'];
  /** Default: from the environment (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `AGENT_MODEL`, ...). */
  model?: ModelConfig;
  /** Named models (see `AgentsPluginOptions.models`). */
  models?: AgentsPluginOptions['models'];
  /** MCP servers whose tools agents may use (see `AgentsPluginOptions.mcpServers`). */
  mcpServers?: McpServers;
  /** Where logins to MCP servers are kept (see `AgentsPluginOptions.mcpTokenFile`). */
  mcpTokenFile?: string;
  /** Where tools' secrets per tenant are kept (see `AgentsPluginOptions.credentialsFile`). */
  credentialsFile?: string;
  /** How the workflows keep their search attributes (see `AgentsPluginOptions.searchAttributes`); default `'steps'`. */
  searchAttributes?: AgentsPluginOptions['searchAttributes'];
  /** Payload encryption keys (see `AgentsPluginOptions.encryptionKeys`). Default: `AGENT_ENCRYPTION_KEYS`, else none. */
  encryptionKeys?: AgentsPluginOptions['encryptionKeys'];
  /** Accept unencrypted payloads despite the keys (see `AgentsPluginOptions.allowPlaintext`). Default: `AGENT_ENCRYPTION_ALLOW_PLAINTEXT`. */
  allowPlaintext?: boolean;
  /** Tracing (see `AgentsPluginOptions.tracing`). Default: OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, else none. */
  tracing?: AgentsPluginOptions['tracing'];
  /** Where images are kept by reference (see `AgentsPluginOptions.blobStore`). Default: `AGENT_BLOB_DIR`, else `~/.durable-agents/blobs`. */
  blobStore?: AgentsPluginOptions['blobStore'];
  /** Where payloads too large for a history go (see `AgentsPluginOptions.payloadStorage`). Default: `AGENT_PAYLOAD_STORE`, else `.temporal/payloads`. */
  payloadStorage?: AgentsPluginOptions['payloadStorage'];
  /** Worker Versioning (see `AgentsPluginOptions.deployment`). Default: `AGENT_DEPLOYMENT_NAME` and `AGENT_BUILD_ID`, else none. */
  deployment?: AgentsPluginOptions['deployment'];
  /** Requests and tokens per minute by model, held by the fleet (see `AgentsPluginOptions.rateLimits`). Default: `AGENT_RATE_LIMITS`, else none. */
  rateLimits?: AgentsPluginOptions['rateLimits'];
  /** Memory across conversations: a store, or where to keep it (see `AgentsPluginOptions.memory`). Default: from the environment. */
  memory?: AgentsPluginOptions['memory'];
  /** Where the tenants' ledgers and the rate governors run (see `AgentsPluginOptions.fleetTaskQueue`). Default: `AGENT_FLEET_TASK_QUEUE`, else `durable-agents-fleet`. */
  fleetTaskQueue?: string;
  /** Workflow tasks the worker holds at once, for fair shares (see `AgentsPluginOptions.workflowTaskSlots`). Default: `AGENT_WORKFLOW_TASK_SLOTS`, else Temporal's. */
  workflowTaskSlots?: number;
  /**
   * What the options and the environment say, read already (see `workerSettings`); default: read
   * here from these options, the environment filling in the rest.
   */
  settings?: WorkerSettings;
  /** Where the workflow bundle is kept between starts (see `AgentsPluginOptions.bundleCache`). Default: `AGENT_BUNDLE_CACHE`, else `node_modules/.cache/durable-agents`. */
  bundleCache?: AgentsPluginOptions['bundleCache'];
  /** A prebuilt workflow bundle (tests); default: the cached bundle, else bundle the agent workflows at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** How long in-flight activities may finish on shutdown (default 10 s). */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  /**
   * Any other worker options: concurrency (`maxConcurrentActivityTaskExecutions`,
   * `maxConcurrentWorkflowTaskExecutions`, `maxCachedWorkflows`), the task queue's rate limit
   * (`maxTaskQueueActivitiesPerSecond`), ...
   */
  workerOptions?: Omit<
    Partial<WorkerOptions>,
    'connection' | 'namespace' | 'taskQueue' | 'plugins' | 'workflowBundle' | 'shutdownGraceTime'
  >;
}

/**
 * A worker that runs only agents: the one-call form of `Worker.create` with an {@link AgentsPlugin}.
 * To add agents to a worker of your own, pass the plugin to `Worker.create` instead.
 */
export function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  const pluginOptions: AgentsPluginOptions = {
    agents: options.agents,
    tools: options.registry,
    model: options.model,
    models: options.models,
    toolProvider: options.toolProvider,
    guardrails: options.guardrails,
    streaming: options.streaming,
    ...(options.policies ? { policies: options.policies } : {}),
    client: options.client,
    mcpServers: options.mcpServers,
    ...(options.mcpTokenFile ? { mcpTokenFile: options.mcpTokenFile } : {}),
    ...(options.credentialsFile ? { credentialsFile: options.credentialsFile } : {}),
    searchAttributes: options.searchAttributes,
    // Unset, the settings read AGENT_ENCRYPTION_KEYS, AGENT_ENCRYPTION_ALLOW_PLAINTEXT and OTEL_* instead.
    encryptionKeys: options.encryptionKeys,
    allowPlaintext: options.allowPlaintext,
    tracing: options.tracing,
    blobStore: options.blobStore,
    payloadStorage: options.payloadStorage,
    deployment: options.deployment,
    bundleCache: options.bundleCache,
    ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
    ...(options.memory ? { memory: options.memory } : {}),
    ...(options.fleetTaskQueue !== undefined ? { fleetTaskQueue: options.fleetTaskQueue } : {}),
    ...(options.workflowTaskSlots !== undefined ? { workflowTaskSlots: options.workflowTaskSlots } : {}),
  };
  // Read once: the task queue comes from the same settings as the plugin's model, stores and keys.
  const settings = options.settings ?? workerSettings({ ...pluginOptions, taskQueue: options.taskQueue });
  return Worker.create({
    ...options.workerOptions,
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: settings.taskQueue,
    plugins: [new AgentsPlugin(pluginOptions, settings)],
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
    shutdownGraceTime: options.shutdownGraceTime ?? '10s',
  });
}

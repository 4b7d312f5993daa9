import type { Client, ClientOptions } from '@temporalio/client';
import type { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { installTracing, tracingFromEnv, type TracingOptions } from '../telemetry/tracing';
import type { DataConverter, ExternalStorage } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import {
  encodedFailureConverterPath,
  EncryptionCodec,
  encryptingDataConverter,
  encryptionKeysFromEnv,
  plaintextAllowedFromEnv,
  type EncryptionKey,
} from '../codec/encryption-codec';
import type { BundleOptions, InjectedSinks, ReplayWorkerOptions, Worker, WorkerOptions } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { AgentSearchAttributeName, ChatMessage, SearchAttributeSettings, SearchAttributeUpdates } from '../core';
import { checkSearchAttributes } from './search-attribute-check';
import { AGENT_MESSAGES_SINK } from '../common/definitions';
import {
  createActivities,
  createConversationLoader,
  modelConfigFromEnv,
  type ConversationLoader,
  type ModelConfig,
  type NamedModels,
  type StreamingOptions,
} from '../activities';
import type { AgentDefinition } from '../agents/define-agent';
import { AgentRegistry } from '../agents/agent-registry';
import type { AnyToolDefinition } from '../tools/define-tool';
import { ToolRegistry } from '../tools/registry';
import { GuardrailRegistry, type GuardrailDefinition } from '../agents/define-guardrail';
import type { ToolProvider } from '../tools/tool-provider';
import { mcpServersFromEnv, type McpServers } from '../tools/mcp/mcp-config';
import { isAiSdkLanguageModel } from '../models/ai-sdk/ai-sdk-model';
import { McpToolSource } from '../tools/mcp/mcp-tool-source';
import type { BlobStore } from '../storage/blob-store';
import { blobStoreFromEnv } from '../storage/blob-store-from-env';
import { CodecBlobStore } from '../storage/codec-blob-store';
import { payloadStorageFromEnv } from '../storage/payload-storage';
import { withAgentWorkflows } from './workflow-bundle';

/** What the plugin brings into a worker. */
export interface AgentsPluginOptions {
  /** Named agents this worker serves (see `defineAgent`). Their tools are registered with them. */
  agents?: readonly AgentDefinition<any>[];
  /**
   * Tools besides the agents' own (a registry, or definitions). A run without a named agent may
   * use all of them. Default: none besides the agents' own.
   */
  tools?: ToolRegistry | readonly AnyToolDefinition[];
  /** The LLM endpoint. Default: `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `AGENT_MODEL` from the environment. */
  model?: ModelConfig;
  /** Picks extra (dynamic) tools for each model call (LangChain4j's `ToolProvider`). */
  toolProvider?: ToolProvider;
  /**
   * Guardrails runs may name (`inputGuardrails: ['no-pii']`), besides those the agents declare
   * (see `defineGuardrail`).
   */
  guardrails?: readonly GuardrailDefinition[];
  /** The client activities read conversations with. Default: the worker's own client. */
  client?: Client;
  /**
   * `false`: the worker gets the agents' activities but not their workflows, for a pool of
   * workers that only call models and tools (pair it with workflow workers that set
   * `enableNonLocalActivities: false`). Its model calls then read conversations by query, since
   * no workflow on it hands them over. Default true.
   */
  workflows?: boolean;
  /**
   * How model calls stream their text to subscribers: `{ enabled: false }` turns it off on this
   * worker (text then arrives in one piece per model call), `batchIntervalMs` spaces the batches
   * (default 100 ms; each batch is one signal). Runs can also opt out with `stream: false`.
   */
  streaming?: StreamingOptions;
  /**
   * Named models: agents pick one with `model: "smart"` (so can `AGENT_MODEL`). Each is a
   * provider-prefixed name (`"anthropic:claude-sonnet-4-5"`, `"openai-responses:gpt-5"`) or a
   * language model of any AI SDK provider package (`google("gemini-2.5-pro")` from
   * `@ai-sdk/google`). Keys and endpoints stay on the worker: runs only name models.
   */
  models?: NamedModels;
  /**
   * Model prices (USD per million tokens: `{ input, output, cachedInput?, cacheWrite? }`) by the
   * provider's model name, over the dated defaults (`DEFAULT_PRICES`); they give every reply's
   * `usage.costUsd`. A model without a price gets no cost, never a guess.
   */
  prices?: ModelConfig['prices'];
  /**
   * MCP servers whose tools the worker's agents may use, by name (`{ files: { command: "npx",
   * args: [...] }, search: { url: "https://...", headers: {...} } }`; see `loadMcpConfig` for the
   * file format other MCP clients use). Tool names are `<server>__<tool>`. Agents opt in with
   * `mcpServers`; runs without a named agent and without a tool list get every tool, these too.
   * Servers are listed when the worker starts and connections close when it stops.
   * Default: the file `AGENT_MCP_CONFIG` names, if set; else none.
   */
  mcpServers?: McpServers;
  /**
   * Where images are kept by reference (the bytes never enter a history): the images users send
   * and those tools return. Clients must reach the same store. Default: a directory,
   * `AGENT_BLOB_DIR` or `~/.durable-agents/blobs` (see `FileBlobStore`), encrypted with
   * `encryptionKeys` when there are some (see `CodecBlobStore`; clients encrypt with theirs).
   */
  blobStore?: BlobStore;
  /**
   * Where payloads too large for a history go (Temporal's External Storage): a tool output of
   * megabytes, say. Default: `AGENT_PAYLOAD_STORE` (`s3://bucket/prefix`, a directory, or `off`),
   * else files in `.temporal/payloads` (see `payloadStorageFromEnv`); `false`: none. Clients need
   * the same store (`connectTemporal()` reads the same variable).
   */
  payloadStorage?: ExternalStorage | false;
  /**
   * The agent search attributes (`AgentName`, `AgentStatus`, `AgentIterations`,
   * `AgentTotalTokens`, `AgentModel`) the workflows upsert: on every change of status the server
   * can see (`'steps'`, the default: two upserts for a step whose tools are activities, none for
   * one whose tools are all local), only at milestones (`'milestones'`: start, approvals, idle,
   * the end), or not at all (`false`). The counters ride along with the status. Each upsert is a
   * billable action on Temporal Cloud. The worker checks at start which are registered in its
   * namespace and says how to add missing ones; only registered ones are upserted.
   */
  searchAttributes?: SearchAttributeUpdates | false;
  /**
   * Encrypt every payload (messages, tool arguments and results, failures) with these AES-256-GCM
   * keys, the first encrypting and all decrypting (see `parseEncryptionKeys`). Default:
   * `AGENT_ENCRYPTION_KEYS`, else none (`[]` turns encryption off whatever the environment says).
   * Clients need the same keys (`connectTemporal()` reads the same variable): `encryptingDataConverter(keys)`,
   * or this plugin in `new Client({ plugins })`. A worker with keys refuses payloads that are not
   * encrypted: its workflow tasks fail, naming the setting, so nothing a client without the keys
   * sent runs (or has its content copied into activity inputs).
   */
  encryptionKeys?: readonly EncryptionKey[];
  /**
   * With `encryptionKeys`: accept payloads that are not encrypted too, for a migration period
   * while clients get the keys. Default: `AGENT_ENCRYPTION_ALLOW_PLAINTEXT=1`.
   */
  allowPlaintext?: boolean;
  /**
   * Trace clients, workflows and activities (`@temporalio/interceptors-opentelemetry`) and each
   * model and tool call (GenAI spans) into this span processor: one trace from a client's start
   * through every step. Default: OTLP over HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (see
   * `tracingFromEnv`); unset, or `false`, nothing is traced and nothing is installed.
   */
  tracing?: TracingOptions | false;
  /**
   * How much of webpack's report on the workflow bundle the worker logs: `'summary'` (default),
   * one line, or its errors and warnings when there are any; `'full'`, the whole report the SDK
   * logs at INFO (about 20 lines of module paths).
   */
  bundlerReport?: 'summary' | 'full';
}

/** The module that registers the agent and conversation workflows (workflow-safe code only). */
const AGENT_WORKFLOWS = require.resolve('../workflows/bundle');

/**
 * The Temporal plugin of durable-agents: `Worker.create({ ..., plugins: [new AgentsPlugin(...)] })`
 * adds the agent and conversation workflows and their activities to a worker, next to the
 * worker's own. With no `workflowsPath` of the user's, the plugin alone is enough; with one, the
 * bundle gets both. It also sets two worker options the agents rely on, unless the user did:
 * `maxHeartbeatThrottleInterval` (2 s, so a cancel reaches a running call promptly) and
 * `stickyQueueScheduleToStartTimeout` (3 s, so a dead worker's runs move on quickly).
 *
 * With a prebuilt `workflowBundle`, bundle it with `bundleWorkflowCode({ workflowsPath, plugins: [plugin] })`.
 */
export class AgentsPlugin extends SimplePlugin {
  /** Every tool this worker can run, the agents' included. */
  readonly tools: ToolRegistry;
  /** @internal The worker's agents by name (createAgentWorker and the tests read them). */
  readonly agents: AgentRegistry;
  private readonly conversations: ConversationLoader;
  private readonly withWorkflows: boolean;
  /** @internal The worker's MCP servers, when it has any. */
  readonly mcp?: McpToolSource;
  private readonly searchAttributeCheck?: { registered?: Promise<AgentSearchAttributeName[]> };
  private readonly encrypts: boolean;
  /** The data converter of a worker that refuses unencrypted payloads, when it does. */
  private readonly strictConverter?: (base: DataConverter | undefined) => DataConverter;
  /** Temporal's OpenTelemetry plugin, which this one applies wherever it is applied itself. */
  private readonly tracing?: OpenTelemetryPlugin;
  private readonly bundlerReport: 'summary' | 'full';

  constructor(options: AgentsPluginOptions = {}) {
    const registry = options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    const agents = new AgentRegistry(options.agents ?? [], registry);
    const guardrails = new GuardrailRegistry([...(options.guardrails ?? []), ...agents.guardrails()]);
    const missing = agents.unknownGuardrails(guardrails);
    if (missing.length)
      throw new Error(
        `AgentsPlugin: agents name guardrails that are not registered (${missing.join(', ')}); give them to the plugin's "guardrails" or use their definitions`,
      );
    const conversations = createConversationLoader(options.client);
    const servers = options.mcpServers ?? mcpServersFromEnv() ?? {};
    agents.checkMcpServers(Object.keys(servers));
    const mcp = Object.keys(servers).length > 0 ? new McpToolSource(servers, registry) : undefined;
    const base = options.model ?? modelConfigFromEnv();
    const named = options.models ?? base.models;
    for (const [name, m] of Object.entries(named ?? {})) {
      if (!(typeof m === 'string' ? m.trim() !== '' : isAiSdkLanguageModel(m)))
        throw new TypeError(
          `AgentsPlugin: models.${name} must be a model name ("anthropic:claude-sonnet-4-5") or an AI SDK language model (an @ai-sdk/* provider's model, specification v2 to v4)`,
        );
    }
    const model = {
      ...base,
      ...(named ? { models: named, configured: base.configured || Object.keys(named).length > 0 } : {}),
      ...(options.prices ? { prices: { ...base.prices, ...options.prices } } : {}),
    };
    // Filled in when a worker is configured (the check needs its connection); read by describeWorker.
    const check: { registered?: Promise<AgentSearchAttributeName[]> } = {};
    const updates = options.searchAttributes === false ? undefined : (options.searchAttributes ?? 'steps');
    const searchAttributes = async (): Promise<SearchAttributeSettings> => ({
      registered: updates && check.registered ? await check.registered : [],
      updates: updates ?? 'steps',
      defaultModel: model.model,
      trigger: 'status',
      endStatus: true,
    });
    const keys = options.encryptionKeys ?? encryptionKeysFromEnv();
    // Payloads over the threshold (a 4 MB tool output) go to the payload store, a claim to the history.
    const fromEnv = options.payloadStorage === undefined ? payloadStorageFromEnv() : undefined;
    const payloads = fromEnv ? fromEnv.storage : options.payloadStorage || undefined;
    // On a cluster, workers and clients usually run on several machines: a local directory would not reach them.
    if (fromEnv && !fromEnv.shared && process.env.TEMPORAL_ADDRESS && !process.env.AGENT_PAYLOAD_STORE)
      process.stderr.write(
        `durable-agents: payloads over ${Math.round(fromEnv.storage.payloadSizeThreshold / 1024)} KiB go to ${fromEnv.where} on this machine; with workers and clients on several machines set AGENT_PAYLOAD_STORE=s3://bucket/prefix (or a shared directory)\n`,
      );
    const withStorage = (converter: DataConverter): DataConverter =>
      payloads && !converter.externalStorage ? { ...converter, externalStorage: payloads } : converter;
    super({
      name: 'durable-agents',
      // Clients and replay workers read what they are given; a worker refuses unencrypted payloads (see configureWorkerOnly).
      ...(keys?.length || payloads
        ? {
            dataConverter: (base: DataConverter | undefined) =>
              withStorage(keys?.length ? encryptingDataConverter(keys, base) : { ...base }),
          }
        : {}),
      activities: createActivities({
        client: options.client,
        registry,
        agents,
        model,
        toolProvider: options.toolProvider,
        guardrails,
        conversations,
        streaming: options.streaming,
        mcp,
        searchAttributes,
        payloadStore: payloads !== undefined,
        // Images are as confidential in the store as messages in the history: through the same keys.
        blobs:
          options.blobStore ??
          (keys?.length
            ? new CodecBlobStore(blobStoreFromEnv(), [
                new EncryptionCodec(keys, !(options.allowPlaintext ?? plaintextAllowedFromEnv())),
              ])
            : blobStoreFromEnv()),
      }),
    });
    this.searchAttributeCheck = updates ? check : undefined;
    this.encrypts = Boolean(keys?.length);
    this.strictConverter =
      keys?.length && !(options.allowPlaintext ?? plaintextAllowedFromEnv())
        ? (base) => withStorage(encryptingDataConverter(keys, base, true))
        : undefined;
    const tracing = options.tracing === undefined ? tracingFromEnv() : options.tracing || undefined;
    this.tracing = tracing ? installTracing(tracing) : undefined;
    this.tools = registry;
    this.agents = agents;
    this.mcp = mcp;
    this.conversations = conversations;
    this.withWorkflows = options.workflows !== false;
    this.bundlerReport = options.bundlerReport ?? 'summary';
  }

  /** The workflows' sink: their new messages go to this worker's model calls. */
  private sinks(sinks: InjectedSinks<any> | undefined, live: boolean): InjectedSinks<any> {
    const added = live
      ? (info: WorkflowInfo, offset: number, messages: ChatMessage[], revision?: number) =>
          this.conversations.add({ workflowId: info.workflowId, runId: info.runId, revision }, offset, messages)
      : () => undefined; // replay workers run no activities
    return { ...sinks, [AGENT_MESSAGES_SINK]: { added: { fn: added, callDuringReplay: false } } };
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    const ours = this.configureWorkerOnly(options);
    // After ours: the tracing interceptors join the workflows bundled from the path set here.
    return this.tracing ? this.tracing.configureWorker(ours) : ours;
  }

  override configureClient(options: ClientOptions): ClientOptions {
    const configured = super.configureClient(options);
    return this.tracing ? this.tracing.configureClient(configured) : configured;
  }

  private configureWorkerOnly(options: WorkerOptions): WorkerOptions {
    const given = options.dataConverter;
    const configured = super.configureWorker(options);
    if (this.strictConverter) configured.dataConverter = this.strictConverter(given);
    if (this.searchAttributeCheck && configured.connection && this.withWorkflows) {
      const warn = (message: string) => process.stderr.write(`durable-agents: ${message}\n`);
      this.searchAttributeCheck.registered = checkSearchAttributes(
        configured.connection,
        configured.namespace ?? 'default',
        warn,
      );
    }
    return {
      ...configured,
      // Without workflows of the user's, the agent workflows are the worker's workflows; with a
      // workflowsPath, configureBundler adds them to it.
      ...(this.withWorkflows && configured.workflowsPath === undefined && configured.workflowBundle === undefined
        ? { workflowsPath: AGENT_WORKFLOWS }
        : {}),
      sinks: this.sinks(configured.sinks, true),
      maxHeartbeatThrottleInterval: configured.maxHeartbeatThrottleInterval ?? '2s',
      stickyQueueScheduleToStartTimeout: configured.stickyQueueScheduleToStartTimeout ?? '3s',
    };
  }

  /** Lists the MCP servers' tools as the worker starts (in the background: a slow server must not hold it up) and closes their connections when it stops. */
  override async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    void this.mcp?.ready();
    try {
      await super.runWorker(worker, next);
    } finally {
      await this.mcp?.close();
    }
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    const configured = { ...super.configureReplayWorker(options) };
    configured.sinks = this.sinks(configured.sinks, false);
    const ours =
      configured.workflowsPath === undefined && configured.workflowBundle === undefined
        ? { ...configured, workflowsPath: AGENT_WORKFLOWS }
        : configured;
    return this.tracing ? this.tracing.configureReplayWorker(ours) : ours;
  }

  override configureBundler(options: BundleOptions): BundleOptions {
    const configured = { ...super.configureBundler(options) };
    // Encrypting workers encode failure messages in workflow code too: a prebuilt bundle needs the converter.
    if (this.encrypts && configured.failureConverterPath === undefined)
      configured.failureConverterPath = encodedFailureConverterPath();
    if (this.tracing) Object.assign(configured, this.tracing.configureBundler(configured));
    return withAgentWorkflows(configured, AGENT_WORKFLOWS, this.bundlerReport === 'summary');
  }
}

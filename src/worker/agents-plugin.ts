import { PolicySet, PolicySetError, type PolicySettings } from '../policies/policy-set';
import type { ClientOptions } from '@temporalio/client';
import type { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import type { DataConverter } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import type { BundleOptions, InjectedSinks, ReplayWorkerOptions, Worker, WorkerOptions } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import { installTracing } from '../telemetry/tracing';
import { encodedFailureConverterPath, encryptingDataConverter } from '../codec/encryption-codec';
import type { AgentEvent } from '../core/events/agent-events';
import type { AgentSearchAttributeName, SearchAttributeSettings } from '../core/run/search-attributes';
import type { ChatMessage } from '../core/messages/chat-message';
import { AGENT_EVENTS_SINK, AGENT_MESSAGES_SINK } from '../contracts/definitions';
import { liveText } from '../contracts/live-text';
import { memoryToolDefinitions } from '../tools/memory-tools';
import { workspaceToolDefinitions } from '../tools/workspace-tools';
import { workspaceHost } from '../workspace/workspace-settings';
import type { MemoryAccess } from '../memory-store/memory-store';
import { watchSharedMemory } from './shared-memory-check';
import { holdRedisLiveChannel } from '../storage/redis-live-bridge';
import { isFleetWorker, joinFleetQueue, needFleetWorkers } from './fleet-worker';
import { createActivities, createConversationLoader, type ConversationLoader } from '../activities';
import { AgentRegistry } from '../agents/agent-registry';
import { ToolRegistry } from '../tools/registry';
import { a2aAgent } from '../tools/a2a-client/a2a-agent';
import { GuardrailRegistry } from '../agents/define-guardrail';
import type { McpToolSource } from '../tools/mcp-client/mcp-tool-source';
import { checkSearchAttributes } from './search-attribute-check';
import { withAgentWorkflows, withBundleCache } from './workflow-bundle';
import type { WorkflowBundleCache } from './bundle-cache';
import type { AgentsPluginOptions } from './plugin-options';
import { workerSettings, type WorkerSettings } from './settings';
import { workerDeploymentOptions, type AgentDeployment } from './deployment';

export type { AgentsPluginOptions } from './plugin-options';

/** The module that registers the agent and conversation workflows (workflow-safe code only). */
const AGENT_WORKFLOWS = require.resolve('../workflows/bundle');

/**
 * The Temporal plugin of durable-agents: `Worker.create({ ..., plugins: [new AgentsPlugin(...)] })`
 * adds the agent and conversation workflows and their activities to a worker, next to the
 * worker's own. With no `workflowsPath` of the user's, the plugin alone is enough; with one, the
 * bundle gets both. It also sets two worker options the agents rely on, unless the user did:
 * `maxHeartbeatThrottleInterval` (2 s, so a cancel reaches a running call promptly) and
 * `stickyQueueScheduleToStartTimeout` (3 s, so a dead worker's runs move on quickly); and, when
 * asked (`workflowTaskSlots`, `AGENT_WORKFLOW_TASK_SLOTS`), `maxConcurrentWorkflowTaskExecutions`.
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
  /** The deployment and build this worker serves, when it is versioned. */
  readonly deployment?: AgentDeployment;
  private readonly bundleCache?: WorkflowBundleCache;
  private readonly memory: MemoryAccess;
  /** The fleet's task queue (tenants' ledgers, rate governors), which this plugin's workers serve too. */
  readonly fleetTaskQueue: string;
  /** The live channel to API processes (`AGENT_LIVE_URL`). */
  private readonly liveUrl?: string;
  /** Workflow tasks a worker holds at once, when the settings say (else Temporal's default). */
  private readonly workflowTaskSlots?: number;

  /**
   * @param settings What the options and the environment say (see `workerSettings`); default:
   *   `workerSettings(options)`, the process's environment filling in what the options leave out.
   */
  constructor(options: AgentsPluginOptions = {}, settings: WorkerSettings = workerSettings(options)) {
    const registry = options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? []);
    for (const remote of settings.a2aAgents) {
      const tool = a2aAgent(remote);
      if (registry.has(tool.name))
        throw new Error(
          `AgentsPlugin: the remote A2A agent "${tool.name}" has the name of a tool already registered; give it another in AGENT_A2A_CONFIG (or "a2aAgents")`,
        );
      registry.register(tool);
    }
    // The memory tools, offered to runs that name them (`tools: ['remember', 'recall']`); a tool
    // of the user's own of the same name is theirs to keep.
    for (const tool of memoryToolDefinitions(settings.memory.store))
      if (!registry.has(tool.name)) registry.register(tool, { dynamic: true });
    // The workspace tools too (`tools: ['bash', 'write_file']`, `--tools bash`).
    for (const tool of workspaceToolDefinitions())
      if (!registry.has(tool.name)) registry.register(tool, { dynamic: true });
    const workspaces = workspaceHost(options.workspaces?.sandbox, settings.workspaceDir, settings.blobStore);
    const agents = new AgentRegistry(options.agents ?? [], registry);
    const guardrails = new GuardrailRegistry([...(options.guardrails ?? []), ...agents.guardrails()]);
    const missing = agents.unknownGuardrails(guardrails);
    if (missing.length)
      throw new Error(
        `AgentsPlugin: agents name guardrails that are not registered (${missing.join(', ')}); give them to the plugin's "guardrails" or use their definitions`,
      );
    const policies = settings.policies ? loadPolicies(settings.policies, registry) : undefined;
    const conversations = createConversationLoader(options.client);
    agents.checkMcpServers(Object.keys(settings.mcpServers));
    const mcp =
      Object.keys(settings.mcpServers).length > 0
        ? new (loadMcpToolSource().McpToolSource)(settings.mcpServers, registry, { tokens: settings.mcpTokens })
        : undefined;
    const { model, encryptionKeys: keys, payloadStorage: payloads } = settings;
    // Filled in when a worker is configured (the check needs its connection); read by describeWorker.
    const check: { registered?: Promise<AgentSearchAttributeName[]> } = {};
    const updates = options.searchAttributes === false ? undefined : (options.searchAttributes ?? 'steps');
    const searchAttributes = async (): Promise<SearchAttributeSettings> => ({
      registered: updates && check.registered ? await check.registered : [],
      updates: updates ?? 'steps',
      defaultModel: model.model,
    });
    for (const note of settings.notes) process.stderr.write(`durable-agents: ${note}\n`);
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
        ...(payloads ? { payloadStorage: payloads } : {}),
        blobs: settings.blobStore,
        ...(settings.rateLimits ? { rateLimits: settings.rateLimits } : {}),
        credentials: settings.credentials,
        workspaces,
        memory: settings.memory,
        fleetTaskQueue: settings.fleetTaskQueue,
        fleetNeeded: needFleetWorkers,
        ...(policies ? { policies } : {}),
      }),
    });
    this.searchAttributeCheck = updates ? check : undefined;
    this.encrypts = Boolean(keys?.length);
    this.strictConverter =
      keys?.length && !settings.allowPlaintext
        ? (base) => withStorage(encryptingDataConverter(keys, base, true))
        : undefined;
    this.tracing = settings.tracing ? installTracing(settings.tracing) : undefined;
    this.tools = registry;
    this.agents = agents;
    this.mcp = mcp;
    this.conversations = conversations;
    this.withWorkflows = options.workflows !== false;
    this.bundlerReport = options.bundlerReport ?? 'summary';
    this.deployment = settings.deployment;
    this.bundleCache = settings.bundleCache;
    this.memory = settings.memory;
    this.fleetTaskQueue = settings.fleetTaskQueue;
    this.liveUrl = settings.liveUrl;
    this.workflowTaskSlots = settings.workflowTaskSlots;
  }

  /** What this plugin puts into a workflow bundle besides the worker's options (see configureBundler). */
  private bundleInputs(): Record<string, unknown> {
    return { agentWorkflows: AGENT_WORKFLOWS, encrypts: this.encrypts, tracing: Boolean(this.tracing) };
  }

  /** The workflows' sink: their new messages go to this worker's model calls. */
  private sinks(sinks: InjectedSinks<any> | undefined, live: boolean): InjectedSinks<any> {
    const added = live
      ? (info: WorkflowInfo, offset: number, messages: ChatMessage[], revision?: number) =>
          this.conversations.add({ workflowId: info.workflowId, runId: info.runId, revision }, offset, messages)
      : () => undefined; // replay workers run no activities
    // Events go to readers in this process (see contracts/live-text.ts); a replay's events were read already.
    const recorded = (info: WorkflowInfo, event: AgentEvent) => {
      if (liveText.listening(info.workflowId)) liveText.publish({ kind: 'event', workflowId: info.workflowId, event });
    };
    return {
      ...sinks,
      [AGENT_MESSAGES_SINK]: { added: { fn: added, callDuringReplay: false } },
      [AGENT_EVENTS_SINK]: { recorded: { fn: recorded, callDuringReplay: false } },
    };
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    const ours = this.configureWorkerOnly(options);
    // After ours: the tracing interceptors join the workflows bundled from the path set here.
    const traced = this.tracing ? this.tracing.configureWorker(ours) : ours;
    return withBundleCache(traced, this.bundleCache, this.bundleInputs(), this);
  }

  override configureClient(options: ClientOptions): ClientOptions {
    const configured = super.configureClient(options);
    return this.tracing ? this.tracing.configureClient(configured) : configured;
  }

  private configureWorkerOnly(options: WorkerOptions): WorkerOptions {
    const given = options.dataConverter;
    const configured = super.configureWorker(options);
    if (this.strictConverter) configured.dataConverter = this.strictConverter(given);
    // The fleet's queue runs ledgers and governors only: no agent search attributes, no versions
    // (see fleet-worker.ts).
    const fleet = configured.taskQueue === this.fleetTaskQueue;
    if (this.searchAttributeCheck && configured.connection && this.withWorkflows && !fleet) {
      const warn = (message: string) => process.stderr.write(`durable-agents: ${message}\n`);
      this.searchAttributeCheck.registered = checkSearchAttributes(
        configured.connection,
        configured.namespace ?? 'default',
        warn,
      );
    }
    return {
      ...configured,
      ...(fleet ? {} : this.versioning(configured)),
      // Without workflows of the user's, the agent workflows are the worker's workflows; with a
      // workflowsPath, configureBundler adds them to it.
      ...(this.withWorkflows && configured.workflowsPath === undefined && configured.workflowBundle === undefined
        ? { workflowsPath: AGENT_WORKFLOWS }
        : {}),
      sinks: this.sinks(configured.sinks, true),
      maxHeartbeatThrottleInterval: configured.maxHeartbeatThrottleInterval ?? '2s',
      stickyQueueScheduleToStartTimeout: configured.stickyQueueScheduleToStartTimeout ?? '3s',
      // Fair shares, when asked: a worker holding few workflow tasks leaves the rest in the
      // server's queue, which hands them out by tenant (inside a worker, tasks wait first come
      // first served); it costs throughput at saturation (see docs/production.md).
      ...(configured.tuner === undefined && this.workflowTaskSlots !== undefined
        ? {
            maxConcurrentWorkflowTaskExecutions:
              configured.maxConcurrentWorkflowTaskExecutions ?? this.workflowTaskSlots,
          }
        : {}),
    };
  }

  /** The worker's Worker Versioning options: the plugin's deployment, unless the worker set its own. */
  private versioning(configured: WorkerOptions): Pick<WorkerOptions, 'workerDeploymentOptions'> {
    if (!this.deployment) return {};
    const own = configured.workerDeploymentOptions;
    if (own) {
      const { deploymentName, buildId } = own.version;
      if (deploymentName !== this.deployment.name || buildId !== this.deployment.buildId)
        throw new Error(
          `AgentsPlugin: the worker's workerDeploymentOptions name ${deploymentName}:${buildId} but the plugin's deployment (or AGENT_DEPLOYMENT_NAME/AGENT_BUILD_ID) names ${this.deployment.name}:${this.deployment.buildId}; set one of them`,
        );
      return {};
    }
    return { workerDeploymentOptions: workerDeploymentOptions(this.deployment) };
  }

  /**
   * Lists the MCP servers' tools as the worker starts (in the background: a slow server must not
   * hold it up), serves the fleet's task queue beside the worker's own while it runs (see
   * fleet-worker.ts), and closes the MCP servers' connections when it stops.
   */
  override async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    if (isFleetWorker(worker)) return super.runWorker(worker, next);
    const warn = (m: string) => process.stderr.write(`durable-agents: ${m}\n`);
    void this.mcp?.ready();
    // An embedded memory store is this process's: other workers on the queue would keep their own.
    const unwatch = this.memory.embeddedDir ? watchSharedMemory(worker, this.memory.embeddedDir, warn) : undefined;
    // A worker without the agent workflows runs no ledgers either.
    const leaveFleet = this.withWorkflows ? joinFleetQueue(worker, this, this.fleetTaskQueue, warn) : undefined;
    // Text and events to readers in other processes (API replicas), while the worker runs.
    const releaseLive = this.liveUrl
      ? holdRedisLiveChannel({ url: this.liveUrl, namespace: worker.options.namespace, warn })
      : undefined;
    try {
      await super.runWorker(worker, next);
    } finally {
      await releaseLive?.();
      unwatch?.();
      await leaveFleet?.();
      await this.mcp?.close();
      // The embedded store's directory is this process's until it closes (see openMemoryStore).
      await this.memory.close().catch(() => undefined);
    }
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    const configured = { ...super.configureReplayWorker(options) };
    configured.sinks = this.sinks(configured.sinks, false);
    const ours =
      configured.workflowsPath === undefined && configured.workflowBundle === undefined
        ? { ...configured, workflowsPath: AGENT_WORKFLOWS }
        : configured;
    const traced = this.tracing ? this.tracing.configureReplayWorker(ours) : ours;
    return withBundleCache(traced, this.bundleCache, this.bundleInputs(), this);
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

/** The MCP client's tool source, loaded only for a worker that has MCP servers: the MCP SDK is some 150 modules, so others start sooner. */
function loadMcpToolSource(): typeof import('../tools/mcp-client/mcp-tool-source') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('../tools/mcp-client/mcp-tool-source');
}

/**
 * The worker's policies, checked against its tools (every tool registered now: the plugin's, the
 * agents', the built-in ones); a policy set it cannot use stops the worker with the sentence
 * that names the policy and the fix.
 */
function loadPolicies(settings: PolicySettings, registry: ToolRegistry): PolicySet {
  const tools = registry.names().map((name) => ({ name, parameters: registry.specs([name])[0].parameters }));
  let set: PolicySet;
  try {
    set = new PolicySet(settings, tools);
  } catch (e) {
    if (e instanceof PolicySetError) throw new Error(`AgentsPlugin: ${e.message}`);
    throw e;
  }
  for (const warning of set.warnings) process.stderr.write(`durable-agents: policies: ${warning}\n`);
  if (Number(process.versions.node.split('.')[0]) < 22)
    process.stderr.write(
      `durable-agents: policies: this worker runs Node ${process.versions.node}, whose V8 can crash the process under Cedar's engine after many decisions (bench/policies.ts); run workers with policies on Node 22 or later\n`,
    );
  return set;
}

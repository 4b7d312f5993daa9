import { ApplicationFailure } from '@temporalio/common';
import type { PolicySet } from '../policies/policy-set';
import type { Client } from '@temporalio/client';
import type { WorkspaceHost } from '../workspace/workspace-host';
import type { ExternalStorage } from '@temporalio/common';
import type { AgentRegistry } from '../agents/agent-registry';
import type { McpToolSource } from '../tools/mcp-client/mcp-tool-source';
import type { ToolRegistry } from '../tools/registry';
import type { ToolProvider } from '../tools/tool-provider';
import type { AgentActivities } from '../contracts/activity-interface';
import type { SearchAttributeSettings } from '../core/run/search-attributes';
import { createCallModel, defaultPricing } from './call-model';
import { TenantBudgets } from './tenant-budgets';
import { RateGovernors } from './rate-governors';
import { ModelGate } from './model-gate';
import type { RateLimit } from '../core/fleet/rate-governor';
import { DEFAULT_FLEET_TASK_QUEUE } from '../contracts/fleet-queue';
import type { CredentialStore } from '../tools/credential-store';
import { Context } from '@temporalio/activity';
import { createSummarizeMessages } from './summarize';
import { createSampleModel } from './sample-model';
import { createAdministerMemory, createExtractMemory, createRecallMemory } from './memory';
import { createDescribeWorker } from './describe-worker';
import { createSendScheduledMessage } from './send-scheduled-message';
import { createDeliverWebhook } from './deliver-webhook';
import { createAwaitA2aTaskEnd } from './a2a-task-end';
import { createCheckGuardrails } from './check-guardrails';
import { GuardrailRegistry } from '../agents/define-guardrail';
import type { ConversationLoader } from './conversation-loader';
import { createExecuteTool } from './execute-tool';
import type { ModelConfig } from '../models/model-config';
import type { ChatModel } from '../models/chat-model';
import { createChatModel } from '../models/create-chat-model';
import { createListAgents, createResolveAgent } from './resolve-agent';
import { createResolveTools } from './resolve-tools';
import { OutputSchemas } from './structured-output';
import type { StreamingOptions } from './text-publisher';
import type { BlobStore } from '../storage/blob-store';
import type { MemoryAccess } from '../memory-store/memory-store';

export { createConversationLoader } from './call-model';
export { ConversationLoader } from './conversation-loader';
export { batchInterval, DEFAULT_BATCH_INTERVAL_MS, type StreamingOptions } from './text-publisher';
export type { ModelConfig, NamedModels } from '../models/model-config';
export type {
  AgentActivities,
  ModelCallInput,
  ToolCallInput,
  ResolveToolsInput,
  ResolveAgentInput,
  ScheduledTurnInput,
  ScheduledTurnResult,
  GuardrailCheckInput,
  WorkerDescription,
} from '../contracts/activity-interface';

/** What the activities need from the worker process. */
export interface ActivityDeps {
  /** Used by `callModel` to read the conversation from the workflow; default: the worker's own client. */
  client?: Client;
  registry: ToolRegistry;
  /** The worker's named agents (their tools are in `registry`). */
  agents: AgentRegistry;
  model: ModelConfig;
  /** The model's adapter; default: the OpenAI Chat Completions adapter for `model`. */
  chatModel?: ChatModel;
  /** Chooses extra (dynamic) tools for each model call. */
  toolProvider?: ToolProvider;
  /** The worker's conversation cache, filled by the workflows' `agentMessages` sink. */
  conversations?: ConversationLoader;
  /** How model calls stream their text (default: they do, in 100 ms batches). */
  streaming?: StreamingOptions;
  /** The worker's MCP servers, whose tools are in `registry` once listed. */
  mcp?: McpToolSource;
  /** Which agent search attributes the workflows keep (default: none). */
  searchAttributes?: () => Promise<SearchAttributeSettings>;
  /** Where images are stored by reference (the worker's settings say which: `AGENT_BLOB_DIR`, ...). */
  blobs: BlobStore;
  /** The worker's guardrails (default: none). */
  guardrails?: GuardrailRegistry;
  /** Whether the worker's large payloads go to a payload store (model replies of any size are then recorded). */
  payloadStore?: boolean;
  /** That payload store (Temporal's External Storage), for a purge of closed workflows (`memory delete --purge`). */
  payloadStorage?: ExternalStorage;
  /** Requests and tokens per minute by model, held by the fleet through each model's rate governor. */
  rateLimits?: Record<string, RateLimit>;
  /** Tools' secrets per tenant, for `ctx.credential`. */
  credentials?: CredentialStore;
  /** Runs' workspaces on this worker (see `WorkspaceHost`). */
  workspaces?: WorkspaceHost;
  /** Memory across conversations, for agents' automatic recall and extraction (opened at first use). */
  memory?: MemoryAccess;
  /** Where the tenants' ledgers and the rate governors run (default `durable-agents-fleet`). */
  fleetTaskQueue?: string;
  /** Called before a model call asks a ledger or a governor (the worker then serves the fleet's queue at once). */
  fleetNeeded?: () => void;
  /** The worker's policies (`AGENT_POLICIES`): each reply's tool calls are decided by them. */
  policies?: PolicySet;
}

/** The agent's activities (see {@link AgentActivities}, their contract), bound to a worker's tools, agents and model endpoint. */
export function createActivities(deps: ActivityDeps): AgentActivities {
  const model = deps.chatModel ?? createChatModel(deps.model);
  // One pricing for the worker's model calls: a model without a price is said once per worker.
  const pricing = defaultPricing(deps.model);
  // The tenants' ledgers, which every model call of a tenant's run reserves in and settles to.
  const fleetTaskQueue = deps.fleetTaskQueue ?? DEFAULT_FLEET_TASK_QUEUE;
  const tenantBudgets = new TenantBudgets(() => deps.client ?? Context.current().client, fleetTaskQueue);
  // The models' rate governors, which every call of a limited model takes its turn from.
  const rateGovernors = deps.rateLimits
    ? new RateGovernors(deps.rateLimits, () => deps.client ?? Context.current().client, fleetTaskQueue)
    : undefined;
  // The one seam every model request goes through: budgets, rate limits, prices, traces.
  const gate = new ModelGate(pricing, tenantBudgets, rateGovernors, deps.fleetNeeded);
  return {
    sampleModel: createSampleModel({ config: deps.model, model, gate }),
    recallMemory: createRecallMemory({ memory: deps.memory, gate }),
    administerMemory: createAdministerMemory({
      memory: deps.memory,
      client: deps.client,
      payloadStorage: deps.payloadStorage,
      blobs: deps.blobs,
    }),
    extractMemory: createExtractMemory({ memory: deps.memory, config: deps.model, model, gate }),
    summarizeMessages: createSummarizeMessages({
      client: deps.client,
      config: deps.model,
      model,
      gate,
      conversations: deps.conversations,
    }),
    callModel: createCallModel({
      client: deps.client,
      registry: deps.registry,
      config: deps.model,
      model,
      gate,
      toolProvider: deps.toolProvider,
      outputs: new OutputSchemas(deps.agents),
      conversations: deps.conversations,
      streaming: deps.streaming,
      mcp: deps.mcp,
      blobs: deps.blobs,
      payloadStore: deps.payloadStore,
    }),
    executeTool: createExecuteTool({
      registry: deps.registry,
      mcp: deps.mcp,
      blobs: deps.blobs,
      gate,
      ...(deps.credentials ? { credentials: deps.credentials } : {}),
      ...(deps.workspaces ? { workspaces: deps.workspaces } : {}),
    }),
    resolveTools: createResolveTools({ registry: deps.registry, mcp: deps.mcp }),
    resolveAgent: createResolveAgent({ agents: deps.agents, mcp: deps.mcp, registry: deps.registry }),
    listAgents: createListAgents({ agents: deps.agents, defaultModel: deps.model.model }),
    describeWorker: createDescribeWorker({
      searchAttributes:
        deps.searchAttributes ?? (async () => ({ registered: [], updates: 'steps', defaultModel: deps.model.model })),
      defaultModel: deps.model.model,
      models: [...new Set([deps.model.model, ...Object.keys(deps.model.models ?? {}), ...deps.agents.models()])],
      route: (name) => model.route(name),
      catalogue: pricing.catalogue,
      ...(deps.policies ? { policies: { mode: deps.policies.mode } } : {}),
    }),
    decidePolicies: async ({ requests }) => {
      if (!deps.policies)
        throw ApplicationFailure.nonRetryable(
          'this worker has no policies, but the run was started on one that had: give it the same AGENT_POLICIES',
          'Policy.NotConfigured',
        );
      return deps.policies.decide(requests);
    },
    sendScheduledMessage: createSendScheduledMessage({ client: deps.client }),
    deliverWebhook: createDeliverWebhook(),
    awaitA2aTaskEnd: createAwaitA2aTaskEnd({ client: deps.client }),
    checkGuardrails: createCheckGuardrails({
      guardrails: deps.guardrails ?? new GuardrailRegistry(),
      client: deps.client,
      conversations: deps.conversations,
    }),
  };
}

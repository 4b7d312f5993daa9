import type { PolicySettings } from '../policies/policy-set';
import type { RateLimit } from '../core/fleet/rate-governor';
import type { CommandSandbox } from '../workspace/sandbox';
import type { Client } from '@temporalio/client';
import type { A2AAgentOptions } from '../tools/a2a-client/a2a-agent';
import type { ExternalStorage } from '@temporalio/common';
import type { EncryptionKey } from '../codec/encryption-codec';
import type { SearchAttributeUpdates } from '../core/run/search-attributes';
import type { ModelConfig, NamedModels, StreamingOptions } from '../activities';
import type { AgentDefinition } from '../agents/define-agent';
import type { AnyToolDefinition } from '../tools/define-tool';
import type { ToolRegistry } from '../tools/registry';
import type { GuardrailDefinition } from '../agents/define-guardrail';
import type { ToolProvider } from '../tools/tool-provider';
import type { McpServers } from '../tools/mcp-client/mcp-config';
import type { BlobStore } from '../storage/blob-store';
import type { TracingOptions } from '../telemetry/tracing';
import type { AgentDeployment } from './deployment';
import type { MemoryStore } from '../memory-store/memory-store';
import type { MemoryOptions } from './memory-settings';

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
   * (default 100 ms; each batch is one signal), `durableBatchIntervalMs` while no live path
   * reaches the readers (default 50 ms). Runs can also opt out with `stream: false`.
   */
  streaming?: StreamingOptions;
  /**
   * Named models: agents pick one with `model: "smart"` (so can `AGENT_MODEL`). Each is a
   * provider-prefixed name (`"anthropic:claude-sonnet-5"`, `"openai-responses:gpt-5.4"`) or a
   * language model of any AI SDK provider package (`google("gemini-2.5-pro")` from
   * `@ai-sdk/google`). Keys and endpoints stay on the worker: runs only name models.
   */
  models?: NamedModels;
  /**
   * Model prices (USD per million tokens: `{ input, output, cachedInput?, cacheWrite? }`) by the
   * provider's model name, over the model catalogue's (`@pydantic/genai-prices`, which prices the
   * providers' models, dated ids and tiers included); they give every reply's `usage.costUsd`. A
   * model neither knows gets no cost, never a guess (and the worker says so once).
   */
  prices?: ModelConfig['prices'];
  /**
   * Requests and tokens per minute by model (the model as runs name it, or the provider's name:
   * `{ "gpt-4o": { requestsPerMinute: 500, tokensPerMinute: 200_000 } }`), held by every worker of
   * the fleet together: each call of a limited model takes its turn from the model's rate
   * governor (a workflow on this task queue), and a 429 pauses the model for all. `maxWaitMs`:
   * past this wait, an agent with fallback models moves to the next. Default:
   * `AGENT_RATE_LIMITS` (the same, as JSON); none: calls go at once.
   */
  rateLimits?: Record<string, RateLimit>;
  /**
   * Context windows in tokens, by the model as runs name it (`{ "llama3.3": 131072, smart:
   * 200000 }`), over the model catalogue's: a run's default `maxPromptTokens` is three quarters of
   * its model's window. For models the catalogue does not know (local ones, fine-tunes).
   */
  contextWindows?: ModelConfig['contextWindows'];
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
   * Where logins to MCP servers with `oauth` are kept (`durable-agents mcp login` writes them):
   * default `AGENT_MCP_TOKENS`, else `~/.durable-agents/mcp-tokens.json`.
   */
  mcpTokenFile?: string;
  /**
   * Where tools' secrets per tenant are kept (`ctx.credential`; `durable-agents credentials set`
   * writes them). Default: `AGENT_CREDENTIALS`, else `~/.durable-agents/credentials.json`.
   */
  credentialsFile?: string;
  /**
   * Remote A2A agents as tools (see `a2aAgent`), by tool name; default: `AGENT_A2A_CONFIG`, a
   * JSON file `{"a2aAgents": {"research": {"url", "description"?, "headers"?, "timeout"?}}}`.
   */
  a2aAgents?: A2AAgentOptions[];
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
  /**
   * Where the worker keeps its workflow bundle between starts, so that it starts in about a
   * second instead of bundling with webpack (3 to 7 s). A bundle is reused only while every file
   * it was made from is unchanged; edit a workflow and the next start bundles again. Used when no
   * other plugin of the worker configures the bundler. Default: `AGENT_BUNDLE_CACHE` (a directory,
   * or `off`), else `node_modules/.cache/durable-agents/workflow-bundles`; `false`: bundle at every
   * start.
   */
  bundleCache?: string | false;
  /**
   * Worker Versioning: the Worker Deployment and build this worker serves (`{ name:
   * "support-agents", buildId: process.env.GIT_SHA }`). One-shot runs then finish on the build
   * they started on; conversations move to the deployment's current build at a turn boundary.
   * Promote a build with `durable-agents deploy promote` (see docs/deploying.md). Default:
   * `AGENT_DEPLOYMENT_NAME` and `AGENT_BUILD_ID`, else none (unversioned, as before); `false`:
   * none whatever the environment says.
   */
  deployment?: AgentDeployment | false;
  /**
   * Memory across conversations (the `remember`, `recall` and `forget` tools, agents'
   * `memory`): a store of your own, or where to keep it and how to embed texts. Default: from
   * the environment (`AGENT_MEMORY_URL`, else a PGlite database in `AGENT_MEMORY_DIR` or
   * `.durable-agents/memory`), opened when a run first uses it.
   */
  memory?: MemoryStore | MemoryOptions;
  /**
   * Runs' workspaces on this worker (the `bash` and file tools, tools with `workspace: true`):
   * where their directories are kept (a cache: every state is saved in the blob store; default
   * `AGENT_WORKSPACE_DIR`, else a directory under the system's temporary directory), and the
   * sandbox commands run in (default: bubblewrap, see `BubblewrapSandbox`; an AI SDK sandbox
   * session through `aiSdkSandbox`, or a sandbox of your own).
   */
  workspaces?: { dir?: string; sandbox?: CommandSandbox };
  /**
   * Policies as code (docs/policies.md): Cedar policies on which tool an agent may call with which
   * arguments, checked against the worker's tools as it starts and applied to every tool call its
   * runs make. Default `AGENT_POLICIES` (a `.cedar` file or a directory of them) and
   * `AGENT_POLICY_MODE` (`enforce`, or `log`: decide and record, let every call go).
   */
  policies?: PolicySettings;
  /**
   * The live channel between this worker and the API processes that read its runs
   * (`redis://host:6379`): each piece of text and each event reaches a reader in any process as it
   * is written. Default `AGENT_LIVE_URL`; none (or `false`): only readers in this process are
   * live, the others read the durable log. See docs/production.md.
   */
  liveUrl?: string | false;
  /**
   * The fleet's task queue, where the tenants' ledgers and the models' rate governors run: every
   * worker with this plugin serves it too, with a small worker of its own beside the agents' (so
   * a ledger never waits behind a flood of runs, nor for the workers of one queue). Give every
   * worker and client of a namespace the same one. Default: `AGENT_FLEET_TASK_QUEUE`, else
   * `durable-agents-fleet`.
   */
  fleetTaskQueue?: string;
  /**
   * Workflow tasks a worker holds at once (`maxConcurrentWorkflowTaskExecutions`, unless the
   * worker's own options set it or a tuner). Tasks a worker has taken wait inside it first come
   * first served; those it has not wait in the server's queue, which hands them out fairly by
   * tenant. `2` keeps a flooding tenant from slowing the others (measured: another tenant's p95
   * 4.7x its time alone with Temporal's default, 1.5x with 2) at a cost in throughput when the
   * workers are saturated (about 40% in `npm run bench:scale`). Default: `AGENT_WORKFLOW_TASK_SLOTS`,
   * else Temporal's (40).
   */
  workflowTaskSlots?: number;
}

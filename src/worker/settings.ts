import type { PolicySettings } from '../policies/policy-set';
import type { PolicyMode } from '../core/state/policy-types';
import { parseRateLimits, rateLimitProblem, type RateLimit } from '../core/fleet/rate-governor';
import type { ExternalStorage } from '@temporalio/common';
import {
  EncryptionCodec,
  encryptionKeysFromEnv,
  plaintextAllowedFromEnv,
  type EncryptionKey,
} from '../codec/encryption-codec';
import { modelConfigFromEnv, type ModelConfig } from '../models/model-config';
import { isAiSdkLanguageModel } from '../models/ai-sdk/ai-sdk-language-model';
import { mcpServersFromEnv, type McpServers } from '../tools/mcp-client/mcp-config';
import { defaultTokenPath, McpTokenStore } from '../tools/mcp-client/mcp-oauth';
import { CredentialStore, defaultCredentialsPath } from '../tools/credential-store';
import { a2aAgentsFromEnv } from '../tools/a2a-client/a2a-config';
import type { A2AAgentOptions } from '../tools/a2a-client/a2a-agent';
import type { BlobStore } from '../storage/blob-store';
import { blobStoreFromEnv } from '../storage/blob-store-from-env';
import { liveUrlSetting } from '../storage/redis-live-bridge';
import { defaultWorkspaceRoot } from '../workspace/workspace-host';
import { CodecBlobStore } from '../storage/codec-blob-store';
import { payloadStorageFromEnv } from '../storage/payload-storage';
import { runtimeLoggingFromEnv, type RuntimeLoggingOptions } from '../telemetry/logging-settings';
import { tracingFromEnv, type TracingOptions } from '../telemetry/tracing';
import { defaultFleetTaskQueue, defaultTaskQueue } from '../connection/task-queue';
import type { AgentsPluginOptions } from './plugin-options';
import { deploymentFromEnv, deploymentProblem, type AgentDeployment } from './deployment';
import { defaultBundleCacheDir, WorkflowBundleCache } from './bundle-cache';
import { memorySettings } from './memory-settings';
import type { MemoryAccess } from '../memory-store/memory-store';

/**
 * Everything a worker takes from its options and, where they are silent, its environment, read in
 * one place: the plugin is built from these, and its activities receive them as dependencies
 * (nothing below reads `process.env`).
 */
export interface WorkerSettings {
  /** The model endpoint and named models (`OPENAI_*`, `ANTHROPIC_*`, `AGENT_MODEL`), with the options' models and prices over them. */
  model: ModelConfig;
  /** The MCP servers whose tools agents may use (`AGENT_MCP_CONFIG`). */
  mcpServers: McpServers;
  /** Where logins to MCP servers are kept (`AGENT_MCP_TOKENS`; `mcp login` writes them). */
  mcpTokens: McpTokenStore;
  /** Tools' secrets per tenant (`AGENT_CREDENTIALS`; `credentials set` writes them), for `ctx.credential`. */
  credentials: CredentialStore;
  /** Remote A2A agents as tools (`AGENT_A2A_CONFIG`). */
  a2aAgents: A2AAgentOptions[];
  /** `AGENT_TASK_QUEUE`, else `agents` (the task queue `createAgentWorker` polls). */
  taskQueue: string;
  /** `AGENT_FLEET_TASK_QUEUE`, else `durable-agents-fleet`: where the tenants' ledgers and the rate governors run (every worker serves it too). */
  fleetTaskQueue: string;
  /** `AGENT_WORKFLOW_TASK_SLOTS`: workflow tasks a worker holds at once (fair shares, see docs/production.md); none: Temporal's default. */
  workflowTaskSlots?: number;
  /** Payload encryption keys (`AGENT_ENCRYPTION_KEYS`); none: payloads are not encrypted. */
  encryptionKeys?: readonly EncryptionKey[];
  /** With keys: whether payloads that are not encrypted are accepted (`AGENT_ENCRYPTION_ALLOW_PLAINTEXT`). */
  allowPlaintext: boolean;
  /** Where payloads too large for a history go (`AGENT_PAYLOAD_STORE`); none: nowhere. */
  payloadStorage?: ExternalStorage;
  /** Where images are kept by reference (`AGENT_BLOB_DIR`), through the encryption keys when there are some. */
  blobStore: BlobStore;
  /** Where spans go (`OTEL_EXPORTER_OTLP_ENDPOINT`); none: nothing is traced. */
  tracing?: TracingOptions;
  /** The SDK's log level and Prometheus endpoint (`AGENT_LOG_LEVEL`, `AGENT_METRICS_PORT`), for `installRuntimeLogging`. */
  logging: Pick<RuntimeLoggingOptions, 'level' | 'metrics'>;
  /** Worker Versioning: the deployment and build this worker serves (`AGENT_DEPLOYMENT_NAME`, `AGENT_BUILD_ID`); none: unversioned. */
  deployment?: AgentDeployment;
  /** Where workflow bundles are kept between starts (`AGENT_BUNDLE_CACHE`); none: bundled at every start. */
  bundleCache?: WorkflowBundleCache;
  /** Requests and tokens per minute by model, held by the whole fleet (`AGENT_RATE_LIMITS`); none: no limits. */
  rateLimits?: Record<string, RateLimit>;
  /** Memory across conversations (`AGENT_MEMORY_URL`, `AGENT_MEMORY_DIR`, `AGENT_EMBEDDING_MODEL`): opened at first use. */
  memory: MemoryAccess;
  /** Where runs' workspace directories are kept (`AGENT_WORKSPACE_DIR`, else under the temporary directory). */
  workspaceDir: string;
  /** The live channel to API processes (`AGENT_LIVE_URL`, a Redis URL); none: this process's readers only. */
  liveUrl?: string;
  /** Where the worker's policies are and how it applies them (`AGENT_POLICIES`, `AGENT_POLICY_MODE`); none: no policies. */
  policies?: PolicySettings;
  /** What the worker should tell its operator as it starts (a payload store other machines cannot reach, say). */
  notes: string[];
}

/**
 * Reads a worker's settings: each option given wins, and the environment (`env`, default the
 * process's) fills in the rest. Throws, naming the option or variable and what it takes, on a
 * value it cannot use, before anything connects.
 */
export function workerSettings(
  options: AgentsPluginOptions & { taskQueue?: string } = {},
  env: NodeJS.ProcessEnv = process.env,
): WorkerSettings {
  const mcpServers = options.mcpServers ?? mcpServersFromEnv(env);
  const a2aAgents = options.a2aAgents ?? a2aAgentsFromEnv(env);
  const base = options.model ?? modelConfigFromEnv(env);
  const named = options.models ?? base.models;
  for (const [name, m] of Object.entries(named ?? {})) {
    if (!(typeof m === 'string' ? m.trim() !== '' : isAiSdkLanguageModel(m)))
      throw new TypeError(
        `AgentsPlugin: models.${name} must be a model name ("anthropic:claude-sonnet-5") or an AI SDK language model (an @ai-sdk/* provider's model, specification v2 to v4)`,
      );
  }
  const model: ModelConfig = {
    ...base,
    ...(named ? { models: named, configured: base.configured || Object.keys(named).length > 0 } : {}),
    ...(options.prices ? { prices: { ...base.prices, ...options.prices } } : {}),
    ...(options.contextWindows ? { contextWindows: { ...base.contextWindows, ...options.contextWindows } } : {}),
  };
  const keys = options.encryptionKeys ?? encryptionKeysFromEnv(env);
  const allowPlaintext = options.allowPlaintext ?? plaintextAllowedFromEnv(env);
  const notes: string[] = [];
  // Payloads over the threshold (a 4 MB tool output) go to the payload store, a claim to the history.
  const fromEnv = options.payloadStorage === undefined ? payloadStorageFromEnv(env) : undefined;
  const payloadStorage = fromEnv ? fromEnv.storage : options.payloadStorage || undefined;
  // On a cluster, workers and clients usually run on several machines: a local directory would not reach them.
  if (fromEnv && !fromEnv.shared && env.TEMPORAL_ADDRESS && !env.AGENT_PAYLOAD_STORE)
    notes.push(
      `payloads over ${Math.round(fromEnv.storage.payloadSizeThreshold / 1024)} KiB go to ${fromEnv.where} on this machine; with workers and clients on several machines set AGENT_PAYLOAD_STORE=s3://bucket/prefix (or a shared directory)`,
    );
  // Images are as confidential in the store as messages in the history: through the same keys.
  const blobStore =
    options.blobStore ??
    (keys?.length
      ? new CodecBlobStore(blobStoreFromEnv(env), [new EncryptionCodec(keys, !allowPlaintext)])
      : blobStoreFromEnv(env));
  const tracing = options.tracing === undefined ? tracingFromEnv(env) : options.tracing || undefined;
  const deployment = options.deployment === undefined ? deploymentFromEnv(env) : options.deployment || undefined;
  const deploymentIssue = options.deployment
    ? deploymentProblem(options.deployment, 'AgentsPlugin: deployment')
    : undefined;
  if (deploymentIssue) throw new TypeError(deploymentIssue);
  const bundleCache = bundleCacheSetting(options.bundleCache, env.AGENT_BUNDLE_CACHE);
  return {
    model,
    mcpServers,
    mcpTokens: new McpTokenStore(options.mcpTokenFile ?? defaultTokenPath(env), keys),
    credentials: new CredentialStore(options.credentialsFile ?? defaultCredentialsPath(env), keys),
    a2aAgents,
    taskQueue: options.taskQueue ?? defaultTaskQueue(env),
    fleetTaskQueue: fleetTaskQueueSetting(options.fleetTaskQueue, env),
    ...workflowTaskSlotsSetting(options.workflowTaskSlots, env.AGENT_WORKFLOW_TASK_SLOTS),
    ...(keys?.length ? { encryptionKeys: keys } : {}),
    allowPlaintext,
    ...(payloadStorage ? { payloadStorage } : {}),
    blobStore,
    ...(tracing ? { tracing } : {}),
    ...(deployment ? { deployment } : {}),
    logging: runtimeLoggingFromEnv(env),
    ...(bundleCache ? { bundleCache } : {}),
    ...rateLimitsSetting(options.rateLimits, env.AGENT_RATE_LIMITS),
    memory: memorySettings(options.memory, env, model),
    workspaceDir: options.workspaces?.dir ?? defaultWorkspaceRoot(env),
    ...liveUrlSetting(options.liveUrl, env.AGENT_LIVE_URL),
    ...policySettings(options.policies, env),
    notes,
  };
}

/** The option's policies, else `AGENT_POLICIES` (a `.cedar` file or directory) in `AGENT_POLICY_MODE` (`enforce`, `log`). */
function policySettings(option: PolicySettings | undefined, env: NodeJS.ProcessEnv): { policies?: PolicySettings } {
  const modeText = option?.mode ?? env.AGENT_POLICY_MODE;
  if (modeText !== undefined && modeText !== 'enforce' && modeText !== 'log')
    throw new Error(`AGENT_POLICY_MODE is "${modeText}": it takes "enforce" (the default) or "log"`);
  const mode = modeText as PolicyMode | undefined;
  if (option) return { policies: { ...option, ...(mode ? { mode } : {}) } };
  if (env.AGENT_POLICIES) return { policies: { path: env.AGENT_POLICIES, ...(mode ? { mode } : {}) } };
  if (mode) throw new Error('AGENT_POLICY_MODE is set but AGENT_POLICIES is not: name the policies file or directory');
  return {};
}

/** The option's rate limits (checked), else `AGENT_RATE_LIMITS`'s; none when neither sets any. */
function rateLimitsSetting(
  option: Record<string, RateLimit> | undefined,
  variable: string | undefined,
): { rateLimits?: Record<string, RateLimit> } {
  if (option) {
    for (const [model, limit] of Object.entries(option)) {
      const problem = rateLimitProblem(model, limit);
      if (problem) throw new TypeError(`AgentsPlugin: rateLimits: ${problem}`);
    }
    return Object.keys(option).length ? { rateLimits: option } : {};
  }
  if (!variable?.trim()) return {};
  return { rateLimits: parseRateLimits(variable) };
}

/** The bundle cache the option, else `AGENT_BUNDLE_CACHE` (`off`, or a directory), asks for; default on. */
function bundleCacheSetting(option: string | false | undefined, variable: string | undefined) {
  if (option === false) return undefined;
  if (typeof option === 'string' && option.trim() !== '') return new WorkflowBundleCache(option);
  const value = variable?.trim();
  if (value && /^(off|false|0|no)$/i.test(value)) return undefined;
  return new WorkflowBundleCache(value || defaultBundleCacheDir());
}

/** The option's fleet task queue (checked), else `AGENT_FLEET_TASK_QUEUE`'s, else the default. */
function fleetTaskQueueSetting(option: string | undefined, env: NodeJS.ProcessEnv): string {
  if (option === undefined) return defaultFleetTaskQueue(env);
  if (typeof option !== 'string' || option.trim() === '')
    throw new TypeError(
      'AgentsPlugin: fleetTaskQueue must be a task queue name (default "durable-agents-fleet"); give every worker of the fleet the same one',
    );
  return option.trim();
}

/** The option's workflow task slots, else `AGENT_WORKFLOW_TASK_SLOTS`'s (a whole number >= 1); none: Temporal's default. */
function workflowTaskSlotsSetting(
  option: number | undefined,
  variable: string | undefined,
): { workflowTaskSlots?: number } {
  const [value, source] =
    option !== undefined
      ? [option, 'AgentsPlugin: workflowTaskSlots']
      : variable?.trim()
        ? [Number(variable.trim()), 'AGENT_WORKFLOW_TASK_SLOTS']
        : [undefined, ''];
  if (value === undefined) return {};
  if (!Number.isInteger(value) || value < 1)
    throw new TypeError(
      `${source} must be a whole number of workflow tasks a worker holds at once (2 for fair shares between tenants; Temporal's default is 40), got "${option ?? variable}"`,
    );
  return { workflowTaskSlots: value };
}

import type { Client } from '@temporalio/client';
import type { ToolRegistry } from '../tools/registry';
import type { ToolProvider } from '../tools/tool-provider';
import { createCallModel } from './call-model';
import { createExecuteTool } from './execute-tool';
import type { ModelConfig } from './model-config';
import { createResolveTools } from './resolve-tools';

export { modelConfigFromEnv, modelConfiguredInEnv, type ModelConfig } from './model-config';
export type { ModelCallInput, ToolCallInput, ResolveToolsInput } from './types';

/** What the activities need from the worker process. */
export interface ActivityDeps {
  /** Used by `callModel` to read the conversation from the workflow. */
  client: Client;
  registry: ToolRegistry;
  model: ModelConfig;
  /** Chooses extra (dynamic) tools for each model call. */
  toolProvider?: ToolProvider;
}

/** The agent's activities, bound to a worker's client, tool registry and model endpoint. */
export function createActivities(deps: ActivityDeps) {
  return {
    callModel: createCallModel({ client: deps.client, registry: deps.registry, config: deps.model, toolProvider: deps.toolProvider }),
    executeTool: createExecuteTool({ registry: deps.registry }),
    resolveTools: createResolveTools({ registry: deps.registry }),
  };
}

/** The activity interface the workflow proxies (`import type` only). */
export type AgentActivities = ReturnType<typeof createActivities>;

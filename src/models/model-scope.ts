import { AsyncLocalStorage } from 'node:async_hooks';
import type { ModelRoute } from './chat-model';

/**
 * Whose model requests are being made: set by an activity around the work it does for a run
 * (a memory recall, an extraction, a tool call), read by the model requests made deep inside it
 * that take no run input of their own — the memory store's embeddings. Through it those requests
 * go through the worker's model gate, for the run's tenant, as an agent step does.
 */
export interface ModelScope {
  /** The run's tenant, whose budget pays. */
  tenant?: string;
  /** The activity's cancellation. */
  signal: AbortSignal;
  /** The gate the requests go through. */
  gate: EmbeddingsGate;
}

/** The model gate's door for embeddings (activities/model-gate.ts). */
export interface EmbeddingsGate {
  embed(
    request: { route: ModelRoute; texts: readonly string[]; tenant?: string; signal: AbortSignal },
    ask: () => Promise<{ embeddings: number[][]; tokens?: number }>,
  ): Promise<number[][]>;
}

const scopes = new AsyncLocalStorage<ModelScope>();

/** Runs `work` with `scope` as the scope of the model requests made inside it. */
export function inModelScope<T>(scope: ModelScope, work: () => Promise<T>): Promise<T> {
  return scopes.run(scope, work);
}

/** The scope of the model requests made here, if an activity set one. */
export function currentModelScope(): ModelScope | undefined {
  return scopes.getStore();
}

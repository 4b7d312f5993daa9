import { Context } from '@temporalio/activity';
import { inModelScope } from '../models/model-scope';
import type { ModelGate } from './model-gate';

/**
 * Runs `work` in the run's model scope: the memory store's embeddings inside it go through the
 * model gate for the run's tenant (see models/model-scope.ts).
 */
export function inRunScope<T>(
  gate: ModelGate | undefined,
  tenant: string | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (!gate) return work();
  return inModelScope(
    { gate, signal: Context.current().cancellationSignal, ...(tenant !== undefined ? { tenant } : {}) },
    work,
  );
}

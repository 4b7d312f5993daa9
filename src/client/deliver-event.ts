import type { Client } from '@temporalio/client';
import { eventIdProblem, eventProblem } from '../core/time/durable-waits';
import { deliverEventSignal } from '../contracts/definitions';
import { ClientError } from './client-error';
import { closedText, explainFailure } from './workflow-lookup';
import { findRunOrConversation } from './workflow-controls';

/**
 * Delivers an event to a run or conversation: a `wait_for_event` call of that name gets the
 * payload as its result. One that arrives before the agent waits is kept, not lost. The name and
 * payload are checked here (a clear error, nothing sent); the delivery is a signal, so it is
 * recorded even while every worker is down. With an `eventId`, a repeated delivery is dropped.
 */
export async function deliverEvent(
  client: Client,
  workflowId: string,
  name: string,
  payload?: unknown,
  options: DeliverEventOptions = {},
): Promise<{ workflowId: string; name: string; kind: 'run' | 'conversation'; eventId?: string }> {
  const { eventId } = options;
  const problem = eventProblem(name, payload) ?? (eventId === undefined ? undefined : eventIdProblem(eventId));
  if (problem) throw new ClientError('invalid', problem, workflowId);
  const found = await findRunOrConversation(client, workflowId);
  if (!found.running)
    throw new ClientError(
      'closed',
      `The ${found.kind === 'conversation' ? 'conversation' : 'run'} "${workflowId}" ${await closedText(client, found)}; no event can reach it`,
      workflowId,
    );
  try {
    await client.workflow.getHandle(workflowId).signal(deliverEventSignal, {
      name,
      payload: payload ?? null,
      ...(eventId !== undefined ? { id: eventId } : {}),
    });
  } catch (err) {
    throw await explainFailure(client, workflowId, err, 'agent');
  }
  return {
    workflowId,
    name,
    kind: found.kind === 'conversation' ? 'conversation' : 'run',
    ...(eventId !== undefined ? { eventId } : {}),
  };
}

/** Options of {@link deliverEvent}. */
export interface DeliverEventOptions {
  /**
   * The event's id (a webhook's delivery id, an idempotency key): a delivery repeating one of the
   * last 1,000 ids the run or conversation received is acknowledged and dropped, so a retried
   * webhook reaches one wait. Without it, every delivery is an event of its own.
   */
  eventId?: string;
}

import type { WorkflowHandle } from '@temporalio/client';
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import {
  decodeFromPayloadsAtIndex,
  ExternalStorageRunner,
  isReferencePayload,
} from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import type { AgentInput } from '../core/state/run-options';
import type { AgentResult, AgentWorkflowResult } from '../core/state/run-results';
import type { RecordedToolExecution, ToolExecution, ToolOutcome } from '../core/messages/tool-results';
import type { ToolCallInput } from '../contracts/activity-interface';

type History = temporal.api.history.v1.IHistory;

/** The tool activity's type name, as history records it. */
const EXECUTE_TOOL = 'executeTool';
/** The model-call activity's type name. */
const CALL_MODEL = 'callModel';
/** The marker the SDK records for a local activity's result. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/**
 * Puts back the tool outputs a run's workflow result leaves out: they are in its history already,
 * as the results of the tool activities, and storing every output twice would make a long run's
 * history half as long again. Reads the history only when something is missing (a run recorded
 * before this change, or one without tools, returns as it is).
 */
export async function restoreToolResults(
  handle: Pick<WorkflowHandle, 'fetchHistory' | 'client' | 'workflowId'>,
  result: AgentWorkflowResult,
): Promise<AgentResult> {
  if (result.toolExecutions.every((e) => e.result !== undefined)) return result as AgentResult;
  const converter = handle.client.options.loadedDataConverter;
  const first = await handle.fetchHistory();
  const outcomes = await toolOutcomesInHistory(first, converter);
  // A long run that continued as new: its outputs are in the histories of all its runs. The
  // handle may name the first run (as `start` returns it) or the last (by id alone).
  const missing = () => result.toolExecutions.some((e) => e.result === undefined && !outcomes.has(e.id));
  const add = async (runId: string) => {
    const history = await handle.client.getHandle(handle.workflowId, runId).fetchHistory();
    for (const [id, outcome] of await toolOutcomesInHistory(history, converter))
      if (!outcomes.has(id)) outcomes.set(id, outcome);
    return history;
  };
  for (let h = first, next = continuedAs(h); next && missing(); next = continuedAs(h)) h = await add(next);
  for (let h = first, previous = continuedFrom(h); previous && missing(); previous = continuedFrom(h))
    h = await add(previous);
  return {
    ...result,
    toolExecutions: result.toolExecutions.map((e) =>
      e.result === undefined ? withOutcome(e, outcomes.get(e.id)) : (e as ToolExecution),
    ),
  };
}

/** The run a history's run continued as new as, if it did. */
export function continuedAs(history: History): string | undefined {
  const last = history.events?.[history.events.length - 1];
  return last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId || undefined;
}

/** The run a history's run continued as new from, if it did. */
export function continuedFrom(history: History): string | undefined {
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
}

function withOutcome(recorded: RecordedToolExecution, outcome: ToolOutcome | undefined): ToolExecution {
  const { resultInHistory: _, ...execution } = recorded;
  // Only a history that was cut short (a reset, say) lacks them.
  if (!outcome) return { ...execution, result: '(this result is no longer in the run history)' };
  const restored: ToolExecution = { ...execution, result: outcome.result };
  if (outcome.value !== undefined) restored.value = outcome.value;
  return restored;
}

/** The tool outcomes a history holds, by call id (the activities' results and local activities' markers). */
export async function toolOutcomesInHistory(
  history: History,
  converter: LoadedDataConverter,
): Promise<Map<string, ToolOutcome>> {
  const outcomes = new Map<string, ToolOutcome>();
  for (const o of await orderedToolOutcomes(history, converter)) outcomes.set(o.callId, o.outcome);
  return outcomes;
}

/** A tool outcome where a history holds it: its call, and how many model calls the run had scheduled by then. */
export interface HistoryToolOutcome {
  callId: string;
  outcome: ToolOutcome;
  /** The model calls scheduled before the call ended: the call answered the last of them. */
  modelCalls: number;
}

/** The tool outcomes a history holds, in the order they were recorded. */
export async function orderedToolOutcomes(
  history: History,
  converter: LoadedDataConverter,
): Promise<HistoryToolOutcome[]> {
  const callOf = new Map<number, string>();
  const outcomes: HistoryToolOutcome[] = [];
  const payloadsOf = storedPayloads(converter);
  let modelCalls = 0;
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === CALL_MODEL) modelCalls++;
    if (scheduled?.activityType?.name === EXECUTE_TOOL) {
      const input = await decodeFromPayloadsAtIndex<ToolCallInput>(
        converter,
        0,
        // A tool call's arguments can be large too (a file the model writes).
        await payloadsOf(scheduled.input?.payloads),
      );
      callOf.set(Number(event.eventId), input.toolCallId);
    }
    const completed = event.activityTaskCompletedEventAttributes;
    const call = completed ? callOf.get(Number(completed.scheduledEventId)) : undefined;
    if (completed && call !== undefined)
      outcomes.push({
        callId: call,
        outcome: await decodeFromPayloadsAtIndex<ToolOutcome>(
          converter,
          0,
          await payloadsOf(completed.result?.payloads),
        ),
        modelCalls,
      });
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === LOCAL_ACTIVITY_MARKER && marker.details?.result?.payloads?.length) {
      const outcome = await decodeFromPayloadsAtIndex<unknown>(
        converter,
        0,
        await payloadsOf(marker.details.result.payloads),
      );
      if (isToolOutcome(outcome) && outcome.toolCallId !== undefined)
        outcomes.push({ callId: outcome.toolCallId, outcome, modelCalls });
    }
  }
  return outcomes;
}

/**
 * The input a run was started with, as its history records it (`rerun`, `eval --from-runs`).
 * A large input (images inline) may be in the payload store: it is fetched back.
 */
export async function recordedRunInput(history: History, converter: LoadedDataConverter): Promise<AgentInput> {
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  return decodeFromPayloadsAtIndex<AgentInput>(converter, 0, await storedPayloads(converter)(started?.input?.payloads));
}

/**
 * Payloads as a raw history holds them, with the claims of payloads that went to the payload
 * store (a 4 MB tool output) fetched back, as the client does for the histories it reads itself.
 * The SDK's runner is internal, but it is the one that reads every driver's claims.
 */
function storedPayloads(
  converter: LoadedDataConverter,
): (payloads: Payload[] | null | undefined) => Promise<Payload[] | null | undefined> {
  const storage = converter.externalStorage ? new ExternalStorageRunner(converter.externalStorage) : undefined;
  return async (payloads) => (storage && payloads?.some(isReferencePayload) ? storage.retrieve(payloads) : payloads);
}

function isToolOutcome(value: unknown): value is ToolOutcome {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ToolOutcome).result === 'string' &&
    typeof (value as ToolOutcome).error === 'boolean'
  );
}

import { patched } from '@temporalio/workflow';

/**
 * Every gate a workflow change needs so that runs already under way replay, in one place, as
 * Temporal's own SDK keeps its replay flags in one registry: each patch's id, the release that
 * brought it, why, and when it can go. Workflow code asks {@link isPatched}; lint allows
 * `patched()` and `deprecatePatch()` in this module only.
 *
 * How a patch goes (Temporal's path): while runs recorded before it may still replay, the old and
 * the new code both stay, behind `isPatched(id)`. Once no such run is open, `deprecatePatch(id)`
 * keeps only the new code; once no run recorded with the patch is open either, it goes. The
 * replay floor says when: histories recorded by a release older than {@link REPLAY_FLOOR} need
 * not replay on this code (docs/deploying.md says how to move over: let the old build drain).
 */

/** The oldest release whose histories this code replays. */
export const REPLAY_FLOOR = '0.2.0';

/** A patch in force: when it came, why, and what retires it. */
interface Patch {
  /** The release that brought it. */
  since: string;
  /** What changed, and what runs recorded before do instead. */
  why: string;
  /** When it can go (usually: the next replay floor). */
  until: string;
}

/** The patches in force. Add one here, with its reason, for any change of what a workflow commands. */
export const PATCHES = {
  'a2a-task-memo': {
    since: '0.2.0',
    why: "an A2A task's record keeps the task's state and status time in its memo at each save, so ListTasks filters and sorts without reading every task; records started before keep only the memo they started with (ListTasks reads their task)",
    until: 'the next replay floor',
  },
  'a2a-task-keeps-configs': {
    since: '0.3.0',
    why: "an ended A2A task's record stays open an hour (A2A_CONFIG_WINDOW_MS), keeping the push notification configs a client sets, reads or deletes on the ended task (A2A allows them on any task); records recorded before end with their task",
    until: 'the next replay floor',
  },
  'start-local-activities-at-once': {
    since: '0.3.0',
    why: "a new run or conversation asks its worker what it keeps (describeWorker) and resolves its agent or tools in one go, two local activities scheduled together, so its first workflow task (which accepts a new chat's message) makes one round trip to the worker fewer; runs recorded before asked one after the other",
    until: 'the next replay floor',
  },
} satisfies Record<string, Patch>;

/** The id of a patch in force. */
export type PatchId = keyof typeof PATCHES;

/**
 * Whether this run takes a patch's new path: always for a run that is not replaying, and for a
 * replayed one whether its history was recorded with the patch.
 */
export function isPatched(id: PatchId): boolean {
  return patched(id);
}

/**
 * The patches retired at the {@link REPLAY_FLOOR} 0.2.0: runs started by releases before it do not
 * replay on this code. Their markers may still be in the histories of such runs; kept here so
 * nobody reuses an id for another change.
 */
export const RETIRED_PATCHES = [
  'durations-need-units', // a bare number as a duration was milliseconds; it is refused now
  'tool-results-in-history', // results left out the tool outputs their history holds
  'additive-prompt-calibration', // the provider's prompt count corrects estimates by addition, not a ratio
  'summary-failure-drops-messages', // a compaction whose summary failed drops the messages and goes on
  'reasoning-events', // readable reasoning is told to subscribers as `reasoning` events
  'run-continue-as-new', // long one-shot runs continue as new between steps
  'conversation-start-failure-answers-messages', // a conversation that cannot start tells its first messages why
  'spent-budget-stops-turns', // a turn that finds the budget spent ends without a model call
  'child-approvals-relay', // sub-agents relay their approval requests to the top run
  'agent-search-attributes', // runs upsert the agent search attributes
  'a2a-task-follows-turn', // an A2A task's record waits for its turn to end by itself
] as const;

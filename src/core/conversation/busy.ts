import type { RunState } from '../state/run-state';

/**
 * What a message does when it arrives while a turn of its conversation runs (or waits for a
 * person). LangGraph's server offers the first four for a thread that is busy; coding agents add
 * `steer`.
 *
 * - `enqueue` (the default): it waits, and is answered in a turn of its own after the running one.
 * - `reject`: it is refused at once (HTTP 409), and nothing is kept.
 * - `interrupt`: the running turn is cancelled as a Stop cancels it (its partial answer stays in
 *   the transcript), and the message is answered next, with everything so far.
 * - `steer`: it joins the running turn: the model sees it before its next call, tool calls
 *   already started finish. With no turn running it starts one, as `enqueue` does.
 */
export const BUSY_POLICIES = ['enqueue', 'reject', 'interrupt', 'steer'] as const;

/** See {@link BUSY_POLICIES}. */
export type BusyPolicy = (typeof BUSY_POLICIES)[number];

/** The start of a refusal by the `reject` policy: clients answer it with 409 (`Client.Busy`). */
export const BUSY_REFUSAL = 'the conversation is busy';

/** Why `value` is no busy policy, or undefined. */
export function busyPolicyProblem(value: unknown): string | undefined {
  if (value === undefined || (BUSY_POLICIES as readonly unknown[]).includes(value)) return undefined;
  return `"busy" must be one of ${BUSY_POLICIES.join(', ')}, not ${JSON.stringify(value)}`;
}

/** What the conversation does with a message, by its policy and what is running. */
export type BusyAction =
  | { kind: 'queue' }
  | { kind: 'refuse'; problem: string }
  | { kind: 'interrupt'; turn: number }
  | { kind: 'steer'; turn: number };

/**
 * Decides what a message does (see {@link BUSY_POLICIES}): `policy` is the message's, else the
 * conversation's; `running` the turn that runs now (or waits for a person), if any; `queued` how
 * many messages wait before it.
 */
export function busyAction(policy: BusyPolicy | undefined, running: number | undefined, queued: number): BusyAction {
  const busy = running !== undefined || queued > 0;
  if (!busy) return { kind: 'queue' };
  switch (policy ?? 'enqueue') {
    case 'enqueue':
      return { kind: 'queue' };
    case 'reject':
      return {
        kind: 'refuse',
        problem: `${BUSY_REFUSAL}: ${running !== undefined ? `turn ${running} is running` : ''}${running !== undefined && queued > 0 ? ' and ' : ''}${queued > 0 ? `${queued} message${queued > 1 ? 's wait' : ' waits'}` : ''}; send it again when the turn ends, or with "busy": "enqueue", "interrupt" or "steer"`,
      };
    case 'interrupt':
      return running === undefined ? { kind: 'queue' } : { kind: 'interrupt', turn: running };
    case 'steer':
      return running === undefined ? { kind: 'queue' } : { kind: 'steer', turn: running };
  }
}

/**
 * The running turn with steering messages added: they join its messages as the person's words,
 * after everything the turn has so far, so the model sees them at its next call. Only between
 * steps: a tool step's results must follow its calls directly, so the loop applies this when the
 * next step is a model call.
 */
export function withSteering(state: RunState, messages: readonly string[]): RunState {
  if (messages.length === 0) return state;
  return {
    ...state,
    messages: [
      ...state.messages,
      ...messages.map((content) => ({ role: 'user' as const, content, steered: true as const })),
    ],
  };
}

/**
 * The policy a message goes by: its own, else a fork's `interrupt` (a fork replaces what the
 * running turn is answering: regenerate while it answers means stop, then answer again), else the
 * conversation's.
 */
export function busyPolicyOf(turn: { busy?: BusyPolicy; fork?: unknown }, conversation: BusyPolicy | undefined) {
  return turn.busy ?? (turn.fork !== undefined ? 'interrupt' : conversation);
}

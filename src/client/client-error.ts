/**
 * Why a client call (CLI, HTTP API, library) could not do what was asked. One type for every
 * entry point, so each maps a failure once: to an exit code, an HTTP status, and the `errorType`
 * of `--json` and HTTP error bodies.
 *
 * - `invalid`: bad input; nothing was started or written.
 * - `not_found`: no workflow with that id.
 * - `wrong_kind`: the id belongs to a one-shot run where a conversation was expected (or the reverse).
 * - `closed`: the run or conversation has finished, so it cannot take this request.
 * - `rejected`: the workflow refused the request (an Update validator), e.g. a wrong call id.
 * - `busy`: the conversation runs a turn and the message said `busy: "reject"` (it was not kept).
 * - `already_running`: a run with that id is already running.
 * - `unreachable`: the Temporal server could not be reached (for longer than we wait).
 * - `no_worker`: no worker polls the task queue, so work started there would only wait.
 * - `worker_failing`: the workers fail the workflow's tasks (bad keys, code that no longer replays),
 *   so it cannot take the request now; it goes on once a worker can run it.
 * - `undecodable`: the workflow's payloads are encrypted and this client has no keys (or not its keys).
 * - `queued`: the conversation could not take the message now (its workers fail its tasks), so it
 *   was queued, durably: the conversation runs it once a worker can. Its answer is not returned.
 * - `still_running`: the caller's bound on waiting ran out; the run goes on.
 * - `gone`: the events asked for are no longer kept (a conversation keeps its recent turns).
 * - `unsupported`: the workflow predates what was asked (e.g. event streams).
 */
export type ClientErrorKind =
  | 'invalid'
  | 'not_found'
  | 'wrong_kind'
  | 'closed'
  | 'rejected'
  | 'busy'
  | 'already_running'
  | 'unreachable'
  | 'no_worker'
  | 'worker_failing'
  | 'undecodable'
  | 'queued'
  | 'still_running'
  | 'gone'
  | 'unsupported';

const ERROR_TYPES: Record<ClientErrorKind, string> = {
  invalid: 'Client.InvalidInput',
  not_found: 'Client.NotFound',
  wrong_kind: 'Client.WrongKind',
  closed: 'Client.Closed',
  rejected: 'Client.Rejected',
  busy: 'Client.Busy',
  already_running: 'Client.AlreadyRunning',
  unreachable: 'Client.Unreachable',
  no_worker: 'Client.NoWorker',
  worker_failing: 'Client.WorkerFailing',
  undecodable: 'Client.Undecodable',
  queued: 'Client.Queued',
  still_running: 'Client.StillRunning',
  gone: 'Client.Gone',
  unsupported: 'Client.Unsupported',
};

/** A client request that failed for a reason people can act on; see {@link ClientErrorKind}. */
export class ClientError extends Error {
  constructor(
    readonly kind: ClientErrorKind,
    message: string,
    /** The workflow concerned, when there is one. */
    readonly workflowId?: string,
    /**
     * What is known all the same when the workflow cannot answer (its Temporal status and search
     * attributes): HTTP error bodies carry it as `lastKnown`.
     */
    readonly lastKnown?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ClientError';
  }

  /** The `errorType` reported in `--json` output and HTTP error bodies, e.g. `Client.NotFound`. */
  get errorType(): string {
    return ERROR_TYPES[this.kind];
  }
}

/**
 * A visibility query the server refused, as an `invalid` error with the server's reason (the SDK
 * says only "Failed to list workflows" and keeps the reason in its cause); `flag` names where the
 * query came from. Other errors are returned as they are.
 */
export function queryRefused(err: unknown, flag: string): unknown {
  const cause = (err as { cause?: { code?: number; details?: string } }).cause;
  if (cause?.code === 3 && cause.details)
    return new ClientError('invalid', `${flag}: Temporal refused the query: ${cause.details}`);
  return err;
}

/**
 * The fleet's task queue: where the workflows every agents worker shares live (the tenants'
 * ledgers and the models' rate governors), whatever queue a worker serves. Every worker with the
 * plugin also serves it, so a ledger never waits for the workers of the queue that first met its
 * tenant, and a flood on one queue cannot hold up the answers every model call waits for.
 */

/** The fleet's task queue unless `AGENT_FLEET_TASK_QUEUE` (or the plugin's `fleetTaskQueue`) names another. */
export const DEFAULT_FLEET_TASK_QUEUE = 'durable-agents-fleet';

import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  RateGovernorStatus,
  RateLimit,
  TurnAnswer,
  TurnRequest,
  RateGovernorState,
} from '../core/fleet/rate-governor';

/**
 * The rate governor workflow's names (one workflow per limited model, see `rateGovernorWorkflow`):
 * shared by the workflow, the model-call activities that take turns, and clients that read it.
 */

/** The rate governor workflow's type name. */
export const RATE_GOVERNOR_WORKFLOW_TYPE = 'rateGovernorWorkflow';

/** The workflow id of a model's governor (the model as its limit names it). */
export function rateGovernorId(model: string): string {
  return `rate-governor-${model.replace(/[^A-Za-z0-9._:-]/g, '_')}`;
}

/** Calls of one worker ask for their turns, together (an Update: each is told when it may go). */
export const takeTurnsUpdate = defineUpdate<TurnAnswer[], [TurnRequest[]]>('takeTurns');
/** What a reply really used, against its estimate (a Signal). */
export const settleTokensSignal = defineSignal<[{ estimated: number; actual: number }]>('settleTokens');
/** The provider answered 429: pause every call of the model until `until` (epoch ms). */
export const pauseModelSignal = defineSignal<[{ until: number }]>('pauseModel');
/** The governor's limits, its queue and its counts. */
export const rateGovernorQuery = defineQuery<RateGovernorStatus>('rateGovernor');

/** The governor's start input: its model and limits, and (after continue-as-new) its state. */
export interface RateGovernorInput {
  model: string;
  limit: RateLimit;
  carry?: RateGovernorState;
  /** The version of `carry`'s shape (see core/state/carry-versions.ts); none: version 1. */
  carryVersion?: number;
}

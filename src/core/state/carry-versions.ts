/**
 * The versions of every state a workflow hands to its next run (continue-as-new), in one place,
 * as the patch registry keeps every replay gate: the state crosses builds (a run continued by
 * one build is read by the next, or, while a deployment rolls, by the one before), so its shape
 * says its version, and a build reads only the versions it knows. A change to a carried shape
 * bumps its version here, with an upgrade from the one before that says why and since when;
 * readers then get the current shape whatever build wrote it.
 */

/** The workflows whose runs continue as new, each with the state it carries. */
export type CarryKind = 'run' | 'conversation' | 'tenantLedger' | 'rateGovernor';

/** One step up from a carry's version `from` to the next: what changed and since when. */
export interface CarryUpgrade {
  /** The version it reads. */
  from: number;
  /** The release that brought the next version. */
  since: string;
  /** What changed in the shape. */
  why: string;
  /** The carry of version `from` in the shape of version `from + 1`. */
  upgrade(carry: Record<string, unknown>): Record<string, unknown>;
}

/** A carried state's registry entry: its current version and the upgrades that lead to it. */
export interface CarryVersion {
  /** The version this build writes. */
  current: number;
  /** One per version before `current`, oldest first. */
  upgrades: CarryUpgrade[];
}

/**
 * Version 1 is the shape of releases up to 0.2.0, which wrote no version: a carry without one is
 * read as version 1.
 */
export const CARRY_VERSIONS: Record<CarryKind, CarryVersion> = {
  run: { current: 1, upgrades: [] },
  conversation: { current: 1, upgrades: [] },
  tenantLedger: { current: 1, upgrades: [] },
  rateGovernor: { current: 1, upgrades: [] },
};

/** The version a carry that names none has: the shape before versions were written. */
export const UNVERSIONED_CARRY = 1;

/** The carry's version as this build writes it, to go beside the carry in the next run's input. */
export function carryVersion(kind: CarryKind, registry = CARRY_VERSIONS): number {
  return registry[kind].current;
}

/**
 * A workflow's input with its carry (if any) read in this build's shape (see {@link readCarry}),
 * the first thing a workflow that continues as new does with its input.
 */
export function carriedIn<I extends { carry?: unknown; carryVersion?: number }>(kind: CarryKind, input: I): I {
  if (input.carry === undefined) return input;
  return { ...input, carry: readCarry(kind, input.carry, input.carryVersion), carryVersion: carryVersion(kind) };
}

/**
 * A carry read in this build's shape: upgraded step by step from the version it was written
 * with (none: {@link UNVERSIONED_CARRY}). A carry from a newer build than this one is refused:
 * reading it as an older shape would lose what the newer build keeps, so the run's workflow task
 * fails (and is tried again) until a build that knows the version picks it up.
 */
export function readCarry<T>(kind: CarryKind, carry: T, version?: number, registry = CARRY_VERSIONS): T {
  const { current, upgrades } = registry[kind];
  let at = version ?? UNVERSIONED_CARRY;
  if (!Number.isInteger(at) || at < 1)
    throw new Error(
      `the ${kind} state carried into this run names version ${JSON.stringify(version)}, which no build writes`,
    );
  if (at > current)
    throw new Error(
      `the ${kind} state carried into this run is version ${at}, written by a newer build; this build reads up to version ${current}. ` +
        'Let the newer build run it: keep its workers up (Worker Versioning pins the run to its build), or roll this worker forward.',
    );
  let shaped = carry as unknown as Record<string, unknown>;
  for (; at < current; at++) {
    const step = upgrades.find((u) => u.from === at);
    if (!step) throw new Error(`no upgrade of the ${kind} state from version ${at} (see core/state/carry-versions.ts)`);
    shaped = step.upgrade(shaped);
  }
  return shaped as unknown as T;
}

import type { ModelSettings } from '../state/run-options';

/**
 * Failures after which the next of an agent's models answers: the model could not answer now
 * (after Temporal's attempts, or at once when overloaded), not a mistake in the request, which
 * the next model would make too. A bad key or an unknown model fails the run as before.
 */
export const FALLBACK_FAILURES: readonly string[] = [
  'ModelCall.Overloaded',
  'ModelCall.ServerError',
  'ModelCall.RateLimit',
  'ModelCall.Connection',
  'ModelCall.Timeout',
  'ModelCall.InvalidResponse',
  'ModelCall.Conflict',
  'ModelCall.Unknown',
];

/**
 * The model to try after the model call failed with `failureType`, when `tried` fallbacks were
 * tried already: the next of `settings.fallbackModels`, or undefined (the failure stands).
 */
export function nextFallbackModel(
  settings: ModelSettings | undefined,
  tried: number,
  failureType: string | undefined,
): string | undefined {
  if (!failureType || !FALLBACK_FAILURES.includes(failureType)) return undefined;
  return settings?.fallbackModels?.[tried];
}

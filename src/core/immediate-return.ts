import type { ToolOutcome } from './types';

/**
 * The immediate-return rule (LangChain4j `ReturnBehavior.IMMEDIATE`): a run may end right after
 * its tools ran, without another LLM round trip, only when every call in that LLM reply was to an
 * immediate tool and none of them failed. Otherwise all results go back to the LLM as usual.
 */
export function shouldReturnImmediately(
  calls: ReadonlyArray<{ immediate: boolean }>,
  outcomes: ReadonlyArray<ToolOutcome>,
): boolean {
  return calls.length > 0 && calls.every((c) => c.immediate) && outcomes.every((o) => !o.error);
}

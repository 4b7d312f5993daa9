/** Default `maxIterations`, as in LangChain's AgentExecutor. */
export const DEFAULT_MAX_ITERATIONS = 15;

/** The answer of a run stopped by a limit, worded as LangChain's AgentExecutor words it. */
export const LIMIT_STOP_MESSAGE = 'Agent stopped due to iteration limit or time limit.';

/** True once the run has made as many LLM calls as it may. */
export function iterationLimitReached(iterations: number, maxIterations: number): boolean {
  return iterations >= maxIterations;
}

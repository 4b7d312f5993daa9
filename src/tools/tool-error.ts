/**
 * Thrown by a tool's `execute` to give the LLM an error result at once: no retries, no failed
 * activity, just `Error: <message>` as the call's result, which the LLM can act on (ask again with
 * other arguments, tell the user). Anything else a tool throws is retried under its retry policy
 * first. MCP tools report `isError` results and protocol errors this way.
 */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

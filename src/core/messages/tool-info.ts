/** The tools the workflow carries out itself, offered to runs that name them. */
export type BuiltinTool = 'read_tool_output' | 'sleep' | 'wait_for_event';

/** A tool as the workflow knows it: a name and how to schedule it, never its implementation. */
export interface ToolInfo {
  name: string;
  immediate: boolean;
  /** The call waits for a human's approve/reject before it runs. */
  needsApproval?: boolean;
  /** Activity start-to-close timeout in ms. */
  timeoutMs: number;
  retry: { maximumAttempts: number; initialIntervalMs: number };
  /** Runs as a local activity (see the tool's `local` setting). */
  local?: boolean;
  /** The tool is this named agent: a call runs it as a child workflow, and its answer is the result. */
  agent?: string;
  /** Calling the tool hands the run (or conversation) off to this named agent. */
  handoff?: string;
  /** The tool works in the run's workspace: each call gets its committed state and may commit a new one. */
  workspace?: true;
  /** A built-in tool the workflow answers itself, without an activity (`read_tool_output`). */
  builtin?: BuiltinTool;
}

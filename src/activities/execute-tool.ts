import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { parseToolArguments, toolErrorText, toolResultText, type ToolOutcome } from '../core';
import type { ToolContext } from '../tools/define-tool';
import type { ToolRegistry } from '../tools/registry';
import { keepHeartbeating } from './heartbeat';
import type { ToolCallInput } from './types';

/**
 * Builds the tool-call activity: one call, dispatched by name. Mistakes the LLM can fix (unknown
 * tool, bad JSON, a schema violation) come back as data, without retries: the LLM reads the error
 * and tries again. A tool that throws is retried by Temporal under the tool's retry policy; the
 * workflow turns the final failure into an error message for the LLM.
 */
export function createExecuteTool(deps: { registry: ToolRegistry }) {
  const { registry } = deps;

  return async function executeTool(input: ToolCallInput): Promise<ToolOutcome> {
    if (!registry.has(input.name)) return failed(`there is no tool named "${input.name}" on this worker. Available tools: ${registry.names().join(', ')}.`);
    const parsed = parseToolArguments(input.arguments);
    if (!parsed.ok) return failed(`${input.name}: ${parsed.error}`);
    const checked = registry.checkArguments(input.name, parsed.value);
    if (!checked.ok) return failed(`invalid arguments for ${input.name}: ${checked.problems.join('; ')}`);

    const info = Context.current().info;
    // Always set for activities scheduled by a workflow; the SDK types also cover standalone activities.
    const { workflowId, runId } = info.workflowExecution ?? { workflowId: '', runId: '' };
    const ctx: ToolContext = {
      // A conversation is one workflow id across continue-as-new runs: that id is the memory id.
      conversationId: workflowId,
      workflowId,
      runId,
      toolCallId: input.toolCallId,
      // The activity id is fixed per scheduled call and survives retries; the run id keeps it unique across resets.
      idempotencyKey: `${workflowId}/${runId}/${info.activityId}`,
      attempt: info.attempt,
      signal: Context.current().cancellationSignal,
    };
    const stop = keepHeartbeating();
    try {
      const value = await registry.execute(input.name, checked.value, ctx);
      const outcome: ToolOutcome = { result: toolResultText(value), error: false };
      // A string is its own text: storing it again as `value` would double its history footprint.
      const json = typeof value === 'string' ? undefined : toJsonValue(value);
      if (json !== undefined) outcome.value = json;
      return outcome;
    } catch (err) {
      if (err instanceof ApplicationFailure) throw err;
      const message = err instanceof Error ? err.message : String(err);
      throw ApplicationFailure.create({ message: `${input.name} failed: ${message}`, type: 'Tool.ExecutionError', cause: err instanceof Error ? err : undefined });
    } finally {
      stop();
    }
  };
}

function failed(message: string): ToolOutcome {
  return { result: toolErrorText(message), error: true };
}

/** The tool's value as plain JSON (what survives the trip through Temporal), or undefined. */
function toJsonValue(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    const json = JSON.stringify(value);
    return json === undefined ? undefined : JSON.parse(json);
  } catch {
    return undefined;
  }
}

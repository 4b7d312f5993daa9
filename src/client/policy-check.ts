import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { CedarRequest, PolicyCheck, PolicyDecision } from '../core/state/policy-types';
import { AGENT_WORKFLOW_TYPE, CONVERSATION_WORKFLOW_TYPE } from '../contracts/definitions';
import { PolicySet, type PolicySettings } from '../policies/policy-set';
import type { SchemaTool } from '../policies/cedar-schema';

/**
 * `durable-agents policy check`: a new policy set tried on the decisions past runs recorded
 * (each with the request as Cedar was asked it), before it is enforced. No worker is needed: the
 * decisions are read from the runs' histories, and the new set decides each again here.
 */

/** One decision a run recorded, with where it was made. */
export interface RecordedDecision {
  workflowId: string;
  runId: string;
  /** The model calls the run had made when it was decided (`context.run.step`). */
  step: number;
  decision: PolicyDecision;
}

/** A decision the new set makes otherwise. */
export interface PolicyChange {
  workflowId: string;
  runId: string;
  step: number;
  callId: string;
  tool: string;
  before: PolicyDecision['decision'];
  after: PolicyDecision['decision'];
  /** The policies of the new set that decided it. */
  policies: string[];
}

/** What `policy check` found. */
export interface PolicyCheckReport {
  /** Runs (workflow runs) read, and those of them that recorded decisions. */
  runs: number;
  runsWithDecisions: number;
  /** Decisions tried again. */
  decisions: number;
  changed: PolicyChange[];
  /** Decisions recorded without their request (by a worker before requests were kept): not tried. */
  withoutRequest: number;
  /** What the new set's check said besides (its warnings). */
  warnings: string[];
}

/** How far back, and which runs (a visibility query, ANDed), `policy check` reads. */
export interface PolicyCheckScope {
  /** Runs started since then (default: a week ago). */
  since?: Date;
  query?: string;
  /** The most workflow runs read (default 1,000). */
  limit?: number;
}

/** The decisions recorded by runs in `scope`, oldest run first. */
export async function recordedDecisions(
  client: Client,
  scope: PolicyCheckScope = {},
): Promise<{ runs: number; decisions: RecordedDecision[] }> {
  const since = scope.since ?? new Date(Date.now() - 7 * 24 * 3_600_000);
  const types = `(WorkflowType = '${AGENT_WORKFLOW_TYPE}' OR WorkflowType = '${CONVERSATION_WORKFLOW_TYPE}')`;
  const query = `${types} AND StartTime > '${since.toISOString()}'${scope.query ? ` AND (${scope.query})` : ''}`;
  const found: Array<{ workflowId: string; runId: string }> = [];
  for await (const w of client.workflow.list({ query })) {
    found.push({ workflowId: w.workflowId, runId: w.runId });
    if (found.length >= (scope.limit ?? 1_000)) break;
  }
  const decisions: RecordedDecision[] = [];
  for (const { workflowId, runId } of found.reverse()) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    for (const e of history.events ?? []) {
      const m = e.markerRecordedEventAttributes;
      if (m?.markerName !== 'core_local_activity') continue;
      const data = m.details?.data?.payloads?.[0]?.data;
      if (!data || !/"activity_type":"decidePolicies"/.test(Buffer.from(data).toString())) continue;
      const payloads = m.details?.result?.payloads;
      if (!payloads?.length) continue;
      const check = await decodeFromPayloadsAtIndex<PolicyCheck>(client.options.loadedDataConverter, 0, payloads);
      for (const decision of check.decisions) {
        const run = (decision.asked?.context.run ?? {}) as { step?: number };
        decisions.push({ workflowId, runId, step: run.step ?? 0, decision });
      }
    }
  }
  return { runs: found.length, decisions };
}

/** The new set (`settings`) tried on recorded decisions: each that it decides otherwise. */
export function tryPolicies(
  settings: PolicySettings,
  recorded: { runs: number; decisions: RecordedDecision[] },
): PolicyCheckReport {
  const asked = recorded.decisions.filter((d) => d.decision.asked);
  // The tools the decisions named, not the worker's all: what does not fit them is a warning here.
  const set = new PolicySet(settings, toolsOf(asked.map((d) => d.decision.asked!)), 'enforce', false);
  const changed: PolicyChange[] = [];
  for (const { workflowId, runId, step, decision } of asked) {
    const after = set.decideAsked(decision.asked!, decision.callId);
    if (after.decision === decision.decision) continue;
    changed.push({
      workflowId,
      runId,
      step,
      callId: decision.callId,
      tool: decision.tool,
      before: decision.decision,
      after: after.decision,
      policies: after.policies,
    });
  }
  return {
    runs: recorded.runs,
    runsWithDecisions: new Set(recorded.decisions.map((d) => d.runId)).size,
    decisions: asked.length,
    changed,
    withoutRequest: recorded.decisions.length - asked.length,
    warnings: set.warnings,
  };
}

/**
 * The tools the recorded requests name, with their arguments' types as the worker gave them to
 * Cedar (a whole number, a decimal, text, a flag), so the new set is checked against the same
 * schema its worker would build.
 */
function toolsOf(requests: readonly CedarRequest[]): SchemaTool[] {
  const byTool = new Map<string, Record<string, { type: string }>>();
  for (const r of requests) {
    if (r.resource.type !== 'Tool') continue;
    const properties = byTool.get(r.resource.id) ?? {};
    for (const [name, value] of Object.entries((r.context.args ?? {}) as Record<string, unknown>)) {
      const type =
        typeof value === 'string'
          ? 'string'
          : typeof value === 'boolean'
            ? 'boolean'
            : typeof value === 'number'
              ? 'integer'
              : (value as { __extn?: { fn?: string } })?.__extn?.fn === 'decimal'
                ? 'number'
                : undefined;
      if (type && !properties[name]) properties[name] = { type };
    }
    byTool.set(r.resource.id, properties);
  }
  return [...byTool].map(([name, properties]) => ({ name, parameters: { type: 'object', properties } }));
}

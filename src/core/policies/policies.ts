import type { PlannedToolCall, RunState } from '../state/run-state';
import type {
  PolicyAction,
  PolicyCheck,
  PolicyDecision,
  PolicyMode,
  PolicyPrincipal,
  PolicyRequest,
} from '../state/policy-types';
import { budgetSpent } from '../state/limits';
import { toolErrorText } from '../messages/tool-results';

/**
 * Policies as code (docs/policies.md): rules, written in Cedar, on which tool an agent may call
 * with which arguments, given what its run did so far. This module is the pure part: what a
 * decision is asked (a {@link PolicyRequest} per tool call, its context built from the run's own
 * state), and what the run does with the answer (a forbidden call is answered with an error the
 * model reads, an asked one waits for a person, a permitted one runs). The worker's engine decides
 * (src/policies/); the workflow records each decision, so a replay never asks again.
 */

/** The requests of the calls a reply asks for, in order, or none when the run has no policies. */
export function policyRequests(state: RunState, calls: readonly PlannedToolCall[]): PolicyRequest[] {
  const { policies } = state;
  if (!policies) return [];
  const counts: Record<string, number> = {};
  for (const e of state.toolExecutions) counts[e.name] = (counts[e.name] ?? 0) + 1;
  const spent = budgetSpent(state);
  const who = {
    ...(policies.tenant !== undefined ? { tenant: policies.tenant } : {}),
    ...(policies.user !== undefined ? { user: policies.user } : {}),
  };
  // The run's own agent, then each agent it works for: every one's policies decide (see `mergeDecisions`).
  const principals = [{ agent: state.agent.name ?? 'default', ...who }, ...(policies.delegatedBy ?? [])];
  const requests: PolicyRequest[] = [];
  for (const c of calls) {
    const tool = c.call.function.name;
    if (c.tool !== undefined) {
      const run = {
        toolCalls: { ...counts },
        denied: { ...state.policyDenied },
        tokens: spent.totalTokens,
        ...(spent.costUsd !== undefined ? { costUsd: spent.costUsd } : {}),
        step: state.iterations,
      };
      // A workspace's command is also a runCommand of it, an agent called as a tool also a delegate to it.
      const actions: Array<{ action?: PolicyAction; tool: string; host?: string }> = [{ tool }];
      if (c.tool.workspace && tool === 'bash') actions.push({ action: 'runCommand', tool });
      if (c.tool.agent !== undefined) actions.push({ action: 'delegate', tool: c.tool.agent });
      // Each host a workspace's command may reach is granted to it, or not (it then runs without it).
      const hosts = c.tool.workspace && tool === 'bash' ? (state.workspace?.network ?? []) : [];
      for (const host of hosts) actions.push({ action: 'grantNetwork', tool, host });
      principals.forEach(({ agent, tenant, user }, i) => {
        const attrs = { ...(tenant !== undefined ? { tenant } : {}), ...(user !== undefined ? { user } : {}) };
        for (const a of actions)
          requests.push({
            callId: c.call.id,
            ...(a.action ? { action: a.action } : {}),
            ...(a.host !== undefined ? { host: a.host } : {}),
            ...(i > 0 ? { caller: i - 1 } : {}),
            agent,
            tool: a.tool,
            ...attrs,
            context: { args: c.arguments, run, ...attrs },
          });
      });
    }
    counts[tool] = (counts[tool] ?? 0) + 1;
  }
  return requests;
}

/**
 * One decision per call from its principals' (the run's agent and the agents it works for):
 * forbidden when any forbids, else asked when any asks, else permitted; the policies named are
 * those of the deciding outcome, all of them.
 */
export function mergeDecisions(decisions: readonly PolicyDecision[]): PolicyDecision[] {
  const byCall = new Map<string, PolicyDecision[]>();
  // A host not granted does not stop the call: it runs without it (see `deniedHosts`).
  for (const d of decisions)
    if (d.action !== 'grantNetwork') byCall.set(d.callId, [...(byCall.get(d.callId) ?? []), d]);
  return [...byCall.values()].map((all) => {
    const outcome = all.some((d) => d.decision === 'forbid')
      ? 'forbid'
      : all.some((d) => d.decision === 'ask')
        ? 'ask'
        : 'permit';
    if (all.length === 1) return all[0];
    const deciding = all.filter((d) => d.decision === outcome);
    const errors = deciding.flatMap((d) => d.errors ?? []);
    return {
      ...deciding[0],
      // The call's tool (its callTool request comes first), whichever action decided.
      tool: all[0].tool,
      policies: [...new Set(deciding.flatMap((d) => d.policies))],
      ...(errors.length ? { errors } : {}),
    };
  });
}

/** Who the agents a run calls as tools work for: the agents it works for, then its own. */
export function delegationOf(state: RunState, who: { tenant?: string; user?: string }): PolicyPrincipal[] {
  const own: PolicyPrincipal = {
    agent: state.agent.name ?? 'default',
    ...(who.tenant !== undefined ? { tenant: who.tenant } : {}),
    ...(who.user !== undefined ? { user: who.user } : {}),
  };
  return [...(state.policies?.delegatedBy ?? []), own];
}

/**
 * The run after a decision step: in `enforce` mode a forbidden call is answered at once with an
 * error naming the policies (the model can change course; the tool never runs) and counted in
 * `policyDenied`, an asked one waits for a person's approval like a tool that needs one; in `log`
 * mode nothing changes but the note that the calls were checked.
 */
export function applyPolicyCheck(state: RunState, check: PolicyCheck): RunState {
  if (state.phase.kind !== 'tools') return state;
  const byCall = new Map(mergeDecisions(check.decisions).map((d) => [d.callId, d]));
  const enforce = check.mode === 'enforce';
  const denied = { ...state.policyDenied };
  const hostsDenied = deniedHostsOf(check.decisions);
  const calls = state.phase.calls.map((planned): PlannedToolCall => {
    const hosts = enforce ? hostsDenied.get(planned.call.id) : undefined;
    const c = hosts ? { ...planned, deniedHosts: hosts } : planned;
    const d = enforce ? byCall.get(c.call.id) : undefined;
    if (!d || d.decision === 'permit') return c;
    if (d.decision === 'ask') return c.approval ? c : { ...c, approval: { status: 'pending' } };
    denied[d.tool] = (denied[d.tool] ?? 0) + 1;
    const { call, arguments: args, immediate } = c;
    return { call, arguments: args, immediate, resolved: { result: toolErrorText(forbiddenText(d)), error: true } };
  });
  return {
    ...state,
    phase: { ...state.phase, calls, policed: true },
    ...(Object.keys(denied).length ? { policyDenied: denied } : {}),
  };
}

/** The hosts a policy did not grant, by call (any principal's forbid or ask withholds a host: no person is asked for one). */
export function deniedHostsOf(decisions: readonly PolicyDecision[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const d of decisions)
    if (d.action === 'grantNetwork' && d.host !== undefined && d.decision !== 'permit') {
      const hosts = out.get(d.callId) ?? [];
      if (!hosts.includes(d.host)) out.set(d.callId, [...hosts, d.host]);
    }
  return out;
}

/** The workspace a call runs in: without the hosts the policies did not grant it. */
export function grantedWorkspace<W extends { network: string[] }>(workspace: W, planned: PlannedToolCall): W {
  const denied = planned.deniedHosts;
  return denied?.length ? { ...workspace, network: workspace.network.filter((h) => !denied.includes(h)) } : workspace;
}

/** What the model reads for a forbidden call. */
export function forbiddenText(d: Pick<PolicyDecision, 'tool' | 'policies' | 'errors'>): string {
  if (!d.policies.length && d.errors?.length) return `not run: ${d.errors[0]}`;
  const which = d.policies.length
    ? `the polic${d.policies.length === 1 ? 'y' : 'ies'} ${d.policies.map((p) => `"${p}"`).join(', ')}`
    : 'the policies (none permits it)';
  return `not run: ${which} forbid${d.policies.length === 1 ? 's' : ''} this call of ${d.tool}; do something else or answer without it`;
}

/** The decision a step falls back on when the engine could not answer: closed in `enforce`, open in `log`. */
export function undecided(requests: readonly PolicyRequest[], mode: PolicyMode, why: string): PolicyCheck {
  return {
    setHash: '',
    mode,
    decisions: requests.map((r) => ({
      callId: r.callId,
      tool: r.tool,
      decision: mode === 'enforce' ? ('forbid' as const) : ('permit' as const),
      policies: [],
      errors: [`the policies could not decide: ${why}`],
    })),
  };
}

/** The key under which a call to another agent (A2A message metadata, MCP `_meta`) names whom it works for. */
export const DELEGATED_BY_KEY = 'durable-agents/delegatedBy';

/**
 * The agents a call from elsewhere says it works for (see {@link DELEGATED_BY_KEY}), when they
 * are well formed (at most 16, each an agent name with an optional tenant and user); else none.
 * Taken as given: naming more agents only adds policies, so a caller cannot widen what it may do.
 */
export function delegatedByOf(meta: unknown): PolicyPrincipal[] | undefined {
  const value = (meta as Record<string, unknown> | undefined)?.[DELEGATED_BY_KEY];
  if (!Array.isArray(value) || value.length === 0 || value.length > 16) return undefined;
  const text = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 256;
  const out: PolicyPrincipal[] = [];
  for (const p of value as Array<Record<string, unknown>>) {
    if (!p || !text(p.agent) || (p.tenant !== undefined && !text(p.tenant)) || (p.user !== undefined && !text(p.user)))
      return undefined;
    out.push({
      agent: p.agent as string,
      ...(p.tenant !== undefined ? { tenant: p.tenant as string } : {}),
      ...(p.user !== undefined ? { user: p.user as string } : {}),
    });
  }
  return out;
}

/**
 * The shapes of policies as code (docs/policies.md) that a run's state holds and its history
 * records; what they mean is in `core/policies/policies.ts`. Plain JSON.
 */

/** How a worker applies its policies: `enforce`, or `log` (each decision recorded, every call let go). */
export type PolicyMode = 'enforce' | 'log';

/** An agent as policies name it (`Agent::"<agent>"`), with its attributes. */
export interface PolicyPrincipal {
  agent: string;
  tenant?: string;
  user?: string;
}

/** A run's policies, set when it starts on a worker that has some (its description says so). */
export interface RunPolicies {
  mode: PolicyMode;
  /** The principal's attributes: the run's tenant and user, where set. */
  tenant?: string;
  user?: string;
  /** The agents the run works for (a sub-agent's callers), whose policies decide its calls too. */
  delegatedBy?: PolicyPrincipal[];
}

/** What the run did so far, as policies read it (`context.run`). Plain JSON. */
export interface PolicyRunContext {
  /** Tool calls by name, before this one (earlier calls of the same reply included). */
  toolCalls: Record<string, number>;
  /** Calls a policy forbade, by tool name. */
  denied: Record<string, number>;
  /** Tokens spent (a conversation: over its turns so far). */
  tokens: number;
  /** US dollars spent, when the models' prices are known. */
  costUsd?: number;
  /** Model calls made so far. */
  step: number;
}

/**
 * One decision asked: may the run's agent (principal `Agent::"<name>"`, `Agent::"default"` for a
 * run of no named agent) call the tool (resource `Tool::"<name>"`) with these arguments (action
 * `Action::"callTool"`)? These names are the contract policies are written against: kept.
 */
export interface PolicyRequest {
  callId: string;
  /**
   * The action asked (absent: `callTool`): every call is a `callTool` of its tool; a workspace's
   * command (`bash`) is also a `runCommand` of it, and a call of an agent as a tool also a
   * `delegate` to that agent (resource `Agent::"<name>"`).
   */
  action?: PolicyAction;
  /** A `grantNetwork` request: the host of the workspace's allow-list it asks for (resource `Host::"<host>"`). */
  host?: string;
  /** Whose decision it is: absent for the run's own agent, else the caller (see `RunPolicies.delegatedBy`) at this index. */
  caller?: number;
  agent: string;
  tool: string;
  /** The principal's attributes. */
  tenant?: string;
  user?: string;
  context: { args: Record<string, unknown>; run: PolicyRunContext; tenant?: string; user?: string };
}

/** What a policy set decided for one call. */
export interface PolicyDecision {
  callId: string;
  tool: string;
  decision: 'permit' | 'forbid' | 'ask';
  /** The ids of the policies that decided it (none: nothing permitted it). */
  policies: string[];
  /** Why the engine could not evaluate some policy for it (a missing attribute, a type error), when it says so. */
  errors?: string[];
  /** The action decided (absent: `callTool`); a `grantNetwork` names its host in `tool`'s stead (see `PolicyRequest.host`). */
  action?: PolicyAction;
  /** A `grantNetwork` decision: the host it decided. */
  host?: string;
  /**
   * The request as the engine was asked it (Cedar's JSON: its principal with their attributes,
   * the tool, the context), kept so another policy set can be tried on it later (`policy check`).
   */
  asked?: CedarRequest;
}

/** The actions policies decide (`Action::"<name>"`). */
export type PolicyAction = 'callTool' | 'runCommand' | 'delegate' | 'grantNetwork';

/** A decision's request in Cedar's JSON form, as the engine read it. */
export interface CedarRequest {
  principal: { type: 'Agent'; id: string };
  /** The principal's attributes (`tenant`, `user`). */
  attrs: Record<string, string>;
  /** Absent: `Action::"callTool"` (decisions recorded before other actions). */
  action?: { type: 'Action'; id: PolicyAction };
  resource: { type: 'Tool' | 'Agent' | 'Host'; id: string };
  context: Record<string, unknown>;
}

/** A decision step's answer, as the history records it: the policy set's hash, its mode, each call's decision. */
export interface PolicyCheck {
  setHash: string;
  mode: PolicyMode;
  decisions: PolicyDecision[];
}

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type * as CedarWasm from '@cedar-policy/cedar-wasm/nodejs';
import type { CedarRequest, PolicyCheck, PolicyDecision, PolicyMode, PolicyRequest } from '../core/state/policy-types';
import { cedarRecord, cedarValue, policySchema, type CedarType, type SchemaTool } from './cedar-schema';

/**
 * A worker's policies (docs/policies.md): Cedar policies from `.cedar` files, checked at start
 * against the schema of the worker's tools, evaluated by Cedar's own engine
 * (`@cedar-policy/cedar-wasm`) for each tool call a run is about to make.
 */

/** Where a worker's policies come from, and how it applies them. */
export interface PolicySettings {
  /** A `.cedar` file, or a directory whose `.cedar` files (in name order) hold the policies (`AGENT_POLICIES`). */
  path?: string;
  /** Policies as text, instead of (or besides) files: `{ "<name>": "<policies>" }`. */
  text?: Record<string, string>;
  /** `enforce` (the default) or `log`: decide and record every call, and let each go (`AGENT_POLICY_MODE`). */
  mode?: PolicyMode;
}

/** A policy set that cannot be used: the sentence says which policy and how to fix it. */
export class PolicySetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PolicySetError';
  }
}

const ACTION = { type: 'Action', id: 'callTool' };

/**
 * Cedar's engine, loaded when a worker has policies: its WebAssembly takes some 30 ms to load,
 * which every worker and CLI command without policies is spared.
 */
let engine: typeof CedarWasm | undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
const cedarEngine = (): typeof CedarWasm => (engine ??= require('@cedar-policy/cedar-wasm/nodejs') as typeof CedarWasm);
/** Each policy set this process loaded gets an id of its own in the engine's cache. */
let loaded = 0;

/** A loaded, checked policy set; {@link decide} answers a reply's requests. */
export class PolicySet {
  /** The SHA-256 of its policies (their ids and text): what each decision records. */
  readonly hash: string;
  readonly ids: string[];
  readonly warnings: string[];
  private readonly asks: Set<string>;
  private readonly engineId = `policies-${++loaded}`;
  private readonly args: Record<string, CedarType>;
  private readonly policies: Record<string, string>;
  /** The policies whose scope names one tool (`resource == Tool::"x"`), by tool; the rest apply to every tool. */
  private readonly byTool = new Map<string, string[]>();
  private readonly anyTool: string[] = [];
  /** The engine's set for each tool decided so far (its policies and the ones of every tool). */
  private readonly prepared = new Map<string, string>();

  constructor(
    settings: PolicySettings,
    tools: readonly SchemaTool[],
    readonly mode: PolicyMode = settings.mode ?? 'enforce',
    /**
     * Whether what does not fit the tools stops the set (a worker's), or is only a warning: a set
     * tried on recorded decisions (`policy check`) knows the tools those decisions named, not all.
     */
    strict = true,
  ) {
    const { policies, parsed } = readPolicies(settings);
    this.policies = policies;
    this.ids = Object.keys(policies);
    this.hash = createHash('sha256').update(JSON.stringify(policies)).digest('hex');
    this.asks = new Set(this.ids.filter((id) => parsed[id].annotations?.decision === 'ask'));
    for (const id of this.ids) {
      const tool = scopedTool(parsed[id]);
      if (tool === undefined) this.anyTool.push(id);
      else this.byTool.set(tool, [...(this.byTool.get(tool) ?? []), id]);
    }
    const schema = policySchema(tools);
    this.args = schema.args;
    this.warnings = [...schema.warnings, ...check(policies, schema.json, strict)];
    if (!this.ids.some((id) => parsed[id].effect === 'permit'))
      this.warnings.push(
        'no policy permits anything, so every tool call is forbidden: add `permit(principal, action, resource);` to allow what no other policy forbids',
      );
  }

  /**
   * The engine's set for a resource (`Tool::x`, `Agent::x`): the policies that can apply to it (Cedar evaluates every policy
   * of a set, so a set of a thousand costs milliseconds; one tool's share of them, microseconds).
   * Made on the tool's first decision, and kept.
   */
  private setFor(tool: string): string {
    const known = this.prepared.get(tool);
    if (known) return known;
    const id = `${this.engineId}:${this.prepared.size}`;
    const ids = [...this.anyTool, ...(this.byTool.get(tool) ?? [])];
    const staticPolicies = Object.fromEntries(ids.map((p) => [p, this.policies[p]]));
    const parsed = cedarEngine().preparsePolicySet(id, { staticPolicies });
    if (parsed.type !== 'success')
      throw new PolicySetError(`the policies could not be loaded: ${messages(parsed.errors)}`);
    this.prepared.set(tool, id);
    return id;
  }

  /** Each request's decision: `permit`, `forbid` (a forbid policy applies, or none permits), or `ask`. */
  decide(requests: readonly PolicyRequest[]): PolicyCheck {
    return { setHash: this.hash, mode: this.mode, decisions: requests.map((r) => this.decideOne(r)) };
  }

  private decideOne(r: PolicyRequest): PolicyDecision {
    const attrs = {
      ...(r.tenant !== undefined ? { tenant: r.tenant } : {}),
      ...(r.user !== undefined ? { user: r.user } : {}),
    };
    const asked: CedarRequest = {
      principal: { type: 'Agent', id: r.agent },
      attrs,
      ...(r.action && r.action !== 'callTool' ? { action: { type: 'Action' as const, id: r.action } } : {}),
      resource:
        r.action === 'delegate'
          ? { type: 'Agent', id: r.tool }
          : r.action === 'grantNetwork'
            ? { type: 'Host', id: r.host ?? '' }
            : { type: 'Tool', id: r.tool },
      context: {
        args: cedarRecord(r.context.args, this.args),
        run: {
          ...r.context.run,
          ...(r.context.run.costUsd !== undefined ? { costUsd: cedarValue(r.context.run.costUsd, DECIMAL) } : {}),
        },
        ...attrs,
      },
    };
    const decided = { ...this.decideAsked(asked, r.callId), tool: r.tool, asked };
    return r.action === 'grantNetwork' ? { ...decided, action: r.action, host: r.host } : decided;
  }

  /** The decision on a request in Cedar's form: one this worker builds, or one a run recorded (`policy check`). */
  decideAsked(asked: CedarRequest, callId: string): PolicyDecision {
    const answer = cedarEngine().statefulIsAuthorized({
      principal: asked.principal,
      action: asked.action ?? ACTION,
      resource: asked.resource,
      context: asked.context as CedarWasm.Context,
      preparsedPolicySetId: this.setFor(`${asked.resource.type}::${asked.resource.id}`),
      entities: [{ uid: asked.principal, attrs: asked.attrs, parents: [] }],
    });
    const base = { callId, tool: asked.resource.id };
    if (answer.type !== 'success')
      return {
        ...base,
        decision: 'forbid',
        policies: [],
        errors: [`the policies could not decide: ${messages(answer.errors)}`],
      };
    const { decision, diagnostics } = answer.response;
    // A policy that could not be evaluated (a missing argument, a type the model got wrong) forbids: closed, not open.
    const errors = diagnostics.errors.map((e) => `policy "${e.policyId}": ${e.error.message}`);
    if (errors.length)
      return { ...base, decision: 'forbid', policies: diagnostics.errors.map((e) => e.policyId), errors };
    if (decision === 'allow') return { ...base, decision: 'permit', policies: diagnostics.reason };
    // Denied by forbid policies that all ask a person: a person decides.
    const person = diagnostics.reason.length > 0 && diagnostics.reason.every((id) => this.asks.has(id));
    return { ...base, decision: person ? 'ask' : 'forbid', policies: diagnostics.reason };
  }
}

const DECIMAL: CedarType = { type: 'Extension', name: 'decimal' };

/** The policies of `settings` by id: `@id("...")` where given, else `<file>:<n>`; an id given twice is refused. */
function readPolicies(settings: PolicySettings): {
  policies: Record<string, string>;
  parsed: Record<string, CedarWasm.PolicyJson>;
} {
  const sources: Array<[string, string]> = Object.entries(settings.text ?? {});
  if (settings.path) {
    let files: string[];
    try {
      files = statSync(settings.path).isDirectory()
        ? readdirSync(settings.path)
            .filter((f) => f.endsWith('.cedar'))
            .sort()
            .map((f) => join(settings.path!, f))
        : [settings.path];
    } catch (e) {
      throw new PolicySetError(
        `the policies at ${settings.path} (AGENT_POLICIES) cannot be read: ${(e as Error).message}; name a .cedar file or a directory of them`,
      );
    }
    if (!files.length) throw new PolicySetError(`${settings.path} (AGENT_POLICIES) holds no .cedar files`);
    for (const file of files) sources.push([basename(file), readFileSync(file, 'utf8')]);
  }
  const out: Record<string, string> = {};
  const parsed: Record<string, CedarWasm.PolicyJson> = {};
  for (const [source, text] of sources) {
    const parts = cedarEngine().policySetTextToParts(text);
    if (parts.type !== 'success') throw new PolicySetError(`${source}: ${messages(parts.errors)}`);
    if (parts.policy_templates.length)
      throw new PolicySetError(`${source}: policy templates (with ?principal or ?resource) are not supported here`);
    parts.policies.forEach((policy, i) => {
      const json = cedarEngine().policyToJson(policy);
      if (json.type !== 'success') throw new PolicySetError(`${source}, policy ${i + 1}: ${messages(json.errors)}`);
      const notes = json.json.annotations ?? {};
      if (notes.decision !== undefined && notes.decision !== 'ask')
        throw new PolicySetError(
          `${source}, policy ${i + 1}: @decision("${notes.decision}") is not a decision: the only one is @decision("ask"), on a forbid policy`,
        );
      if (notes.decision === 'ask' && json.json.effect !== 'forbid')
        throw new PolicySetError(
          `${source}, policy ${i + 1}: @decision("ask") goes on a forbid policy (what it would forbid, a person decides instead)`,
        );
      const id = notes.id ?? `${source}:${i + 1}`;
      if (out[id] !== undefined)
        throw new PolicySetError(`two policies have the id "${id}": give each its own @id("...")`);
      out[id] = policy;
      parsed[id] = json.json;
    });
  }
  if (!Object.keys(out).length) throw new PolicySetError('the policy set is empty: write at least one policy');
  return { policies: out, parsed };
}

/** The resource a policy's scope names (`resource == Tool::"x"`: `Tool::x`; or an agent), or undefined when it may apply to any. */
function scopedTool(policy: CedarWasm.PolicyJson): string | undefined {
  const r = policy.resource as {
    op: string;
    entity?: { type?: string; id?: string; __entity?: { type: string; id: string } };
  };
  if (r.op !== '==' || !r.entity) return undefined;
  const uid = r.entity.__entity ?? r.entity;
  return uid.type === 'Tool' || uid.type === 'Agent' || uid.type === 'Host' ? `${uid.type}::${uid.id}` : undefined;
}

/** What the validator says against the schema, as errors (thrown) or warnings (returned). */
function check(policies: Record<string, string>, schema: Record<string, unknown>, strict: boolean): string[] {
  const v = cedarEngine().validate({
    schema: schema as CedarWasm.Schema,
    policies: { staticPolicies: policies },
    validationSettings: { mode: 'strict' },
  });
  if (v.type !== 'success') throw new PolicySetError(`the policies could not be checked: ${messages(v.errors)}`);
  const wrong = [
    ...v.validationErrors.map((e) => `policy "${e.policyId}": ${e.error.message}`),
    // A policy that can never apply names something no tool or run has (a misspelt argument, guarded by `has`).
    ...v.validationWarnings
      .filter((w) => /impossible/.test(w.error.message))
      .map((w) => `policy "${w.policyId}" can never apply: it names an argument or attribute that no tool or run has`),
  ];
  if (wrong.length && !strict) return wrong;
  if (wrong.length)
    throw new PolicySetError(
      `${wrong.join('; ')} (the schema: docs/policies.md; arguments are the worker's tools' parameters)`,
    );
  return v.validationWarnings.filter((w) => !/impossible/.test(w.error.message)).map((w) => w.error.message);
}

function messages(errors: ReadonlyArray<{ message: string }>): string {
  return errors.map((e) => e.message).join('; ');
}

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PolicySet, PolicySetError } from '../../src/policies/policy-set';
import { policySchema } from '../../src/policies/cedar-schema';
import {
  applyPolicyCheck,
  DELEGATED_BY_KEY,
  delegatedByOf,
  delegationOf,
  forbiddenText,
  grantedWorkspace,
  policyRequests,
  undecided,
} from '../../src/core/policies/policies';
import { forCall } from '../../src/mcp-server/mcp-agent-tools';
import { nextStep, startRun } from '../../src/core/run/agent-loop';
import type { PlannedToolCall, RunState } from '../../src/core/state/run-state';
import type { PolicyRequest } from '../../src/core/state/policy-types';
import type { ToolInfo } from '../../src/core/messages/tool-info';

/** The worker's tools as the schema sees them: `add` of whole numbers, `transfer` of any amount. */
const tools = [
  {
    name: 'add',
    parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } } },
  },
  {
    name: 'transfer',
    parameters: { type: 'object', properties: { to: { type: 'string' }, amount: { type: 'number' } } },
  },
  { name: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } },
];

const BASE = 'permit(principal, action, resource);';

/** A tool call of the model's reply, as the run plans it (`tool`: what the run knows of the tool). */
function planned(
  id: string,
  name: string,
  args: Record<string, unknown>,
  tool: Partial<ToolInfo> = {},
): PlannedToolCall {
  return {
    call: { id, type: 'function', function: { name, arguments: JSON.stringify(args) } },
    arguments: args,
    immediate: false,
    tool: { name, immediate: false, needsApproval: false, ...tool } as ToolInfo,
  };
}

function request(tool: string, args: Record<string, unknown>, run: Partial<PolicyRequest['context']['run']> = {}) {
  return {
    callId: `c-${tool}`,
    agent: 'clerk',
    tool,
    tenant: 'acme',
    context: { args, run: { toolCalls: {}, denied: {}, tokens: 0, step: 1, ...run }, tenant: 'acme' },
  };
}

describe('a policy set', () => {
  it('permits, forbids naming the policy, and asks a person, from the arguments and the run so far', () => {
    const set = new PolicySet(
      {
        text: {
          'rules.cedar': `${BASE}
@id("big-adds") forbid(principal, action == Action::"callTool", resource == Tool::"add") when { context.args has a && context.args.a > 100 };
@id("refunds-need-a-person") @decision("ask")
forbid(principal, action, resource == Tool::"transfer") when { context.args has amount && context.args.amount.greaterThan(decimal("100.0")) };
@id("three-bash") forbid(principal, action, resource == Tool::"bash") when { context.run.toolCalls has bash && context.run.toolCalls.bash >= 2 };
@id("acme-no-bash") forbid(principal, action, resource == Tool::"bash") when { principal has tenant && principal.tenant == "globex" };`,
        },
      },
      tools,
    );
    const check = set.decide([
      request('add', { a: 500, b: 1 }),
      request('add', { a: 5, b: 1 }),
      request('transfer', { to: 'x', amount: 100.5 }),
      request('transfer', { to: 'x', amount: 99.99 }),
      request('bash', { command: 'ls' }, { toolCalls: { bash: 2 } }),
      request('bash', { command: 'ls' }, { toolCalls: { bash: 1 } }),
    ]);
    expect(check.setHash).toMatch(/^[0-9a-f]{64}$/);
    expect(check.decisions.map((d) => [d.decision, d.policies])).toEqual([
      ['forbid', ['big-adds']],
      ['permit', ['rules.cedar:1']],
      ['ask', ['refunds-need-a-person']],
      ['permit', ['rules.cedar:1']],
      ['forbid', ['three-bash']],
      ['permit', ['rules.cedar:1']],
    ]);
    expect(forbiddenText(check.decisions[0])).toBe(
      'not run: the policy "big-adds" forbids this call of add; do something else or answer without it',
    );
  });

  it('refuses at start, with a sentence, a policy that names what no tool or run has', () => {
    const load = (text: string) => () => new PolicySet({ text: { 'p.cedar': `${BASE}\n${text}` } }, tools);
    expect(load('forbid(principal, action, resource) when { context.run.tokenz > 5 };')).toThrow(
      /attribute `run.tokenz` in context for Action::"callTool" not found/,
    );
    // A misspelt argument behind `has` would never apply: refused too.
    expect(
      load('forbid(principal, action, resource) when { context.args has amout && context.args.amout == 1 };'),
    ).toThrow(/can never apply: it names an argument or attribute that no tool or run has/);
    expect(load('@decision("maybe") forbid(principal, action, resource);')).toThrow(
      /the only one is @decision\("ask"\)/,
    );
    expect(load('@id("x") forbid(principal, action, resource); @id("x") forbid(principal, action, resource);')).toThrow(
      /two policies have the id "x"/,
    );
    expect(load('forbid(principal, action, resource) when { context.args.a > }')).toThrow(PolicySetError);
    expect(() => new PolicySet({ path: join(tmpdir(), 'no-such-policies') }, tools)).toThrow(
      /cannot be read: .*name a \.cedar file or a directory of them/,
    );
    // Nothing permitted: a warning, not a refusal (a set of forbids alone is a choice).
    expect(new PolicySet({ text: { 'p.cedar': 'forbid(principal, action, resource);' } }, tools).warnings).toEqual([
      expect.stringMatching(/no policy permits anything/),
    ]);
  });

  it('reads a directory of .cedar files in name order, and types arguments from the tools', () => {
    const dir = mkdtempSync(join(tmpdir(), 'policies-'));
    writeFileSync(join(dir, 'a.cedar'), BASE);
    writeFileSync(join(dir, 'b.cedar'), 'forbid(principal, action, resource == Tool::"bash");');
    writeFileSync(join(dir, 'notes.txt'), 'not a policy');
    const set = new PolicySet({ path: dir }, tools, 'log');
    expect(set.ids).toEqual(['a.cedar:1', 'b.cedar:1']);
    expect(set.decide([request('bash', { command: 'ls' })])).toMatchObject({
      mode: 'log',
      decisions: [{ decision: 'forbid', policies: ['b.cedar:1'] }],
    });
    // An argument two tools type differently cannot be named; whole and any numbers meet as decimals.
    const schema = policySchema([
      ...tools,
      { name: 'odd', parameters: { type: 'object', properties: { to: { type: 'integer' }, a: { type: 'number' } } } },
    ]);
    expect(schema.args.a).toEqual({ type: 'Extension', name: 'decimal', required: false });
    expect(schema.args.to).toBeUndefined();
    expect(schema.warnings).toEqual([expect.stringMatching(/"to" has different types in the tools transfer and odd/)]);
  });

  it('forbids when a policy cannot be evaluated (closed, not open)', () => {
    const set = new PolicySet(
      {
        text: {
          p: `${BASE}\n@id("x") forbid(principal, action, resource) when { context.args has a && context.args.a > 1 };`,
        },
      },
      tools,
    );
    // The model sent a string where the tool takes a whole number.
    const [d] = set.decide([request('add', { a: 'lots' })]).decisions;
    expect(d).toMatchObject({ decision: 'forbid', policies: ['x'] });
    expect(d.errors?.[0]).toMatch(/policy "x": /);
  });
});

describe("the run's side", () => {
  const base = (): RunState => {
    const s = startRun({ message: 'go', agent: 'clerk' }, [], 'v1');
    return {
      ...s,
      policies: { mode: 'enforce', tenant: 'acme' },
      iterations: 2,
      toolExecutions: [{ id: 'x', name: 'stringLength', arguments: {}, result: '1', error: false }],
      phase: {
        kind: 'tools',
        calls: [
          planned('1', 'stringLength', { s: 'a' }),
          planned('2', 'stringLength', { s: 'b' }),
          planned('3', 'add', {}),
        ],
      },
    } as RunState;
  };

  it('asks about each call with what the run did before it, and applies the answers', () => {
    const state = base();
    const step = nextStep(state);
    expect(step.type).toBe('check_policies');
    const requests = policyRequests(state, (state.phase as { calls: PlannedToolCall[] }).calls);
    expect(requests.map((r) => r.context.run.toolCalls)).toEqual([
      { stringLength: 1 },
      { stringLength: 2 },
      { stringLength: 3 },
    ]);
    expect(requests[0]).toMatchObject({
      agent: 'clerk',
      tenant: 'acme',
      context: { tenant: 'acme', run: { step: 2 } },
    });
    const after = applyPolicyCheck(state, {
      setHash: 'h',
      mode: 'enforce',
      decisions: [
        { callId: '1', tool: 'stringLength', decision: 'permit', policies: [] },
        { callId: '2', tool: 'stringLength', decision: 'forbid', policies: ['two-only'] },
        { callId: '3', tool: 'add', decision: 'ask', policies: ['ask-add'] },
      ],
    });
    const calls = (after.phase as { calls: PlannedToolCall[]; policed?: true }).calls;
    expect(calls[0]).toEqual(planned('1', 'stringLength', { s: 'a' }));
    expect(calls[1].resolved).toEqual({
      result: expect.stringContaining('the policy "two-only" forbids this call of stringLength'),
      error: true,
    });
    expect(calls[2].approval).toEqual({ status: 'pending' });
    expect(after.policyDenied).toEqual({ stringLength: 1 });
    // Checked once: the approval comes next.
    expect(nextStep(after)).toMatchObject({ type: 'await_approval', pending: [{ callId: '3' }] });
  });

  it('in log mode changes nothing but that the calls were checked; undecided forbids, or permits in log mode', () => {
    const state = base();
    const requests = policyRequests(state, (state.phase as { calls: PlannedToolCall[] }).calls);
    const logged = applyPolicyCheck(state, undecided(requests, 'log', 'down'));
    expect((logged.phase as { calls: PlannedToolCall[] }).calls).toEqual(
      (state.phase as { calls: PlannedToolCall[] }).calls,
    );
    expect(nextStep(logged).type).toBe('run_tools');
    const closed = applyPolicyCheck(state, undecided(requests, 'enforce', 'the engine is down'));
    expect((closed.phase as { calls: PlannedToolCall[] }).calls[0].resolved?.result).toContain(
      'not run: the policies could not decide: the engine is down',
    );
  });
});

describe('docs/policies.md', () => {
  it('its examples load against the tools they name, and decide as the page says', () => {
    const page = readFileSync(join(__dirname, '../../docs/policies.md'), 'utf8');
    const blocks = [...page.matchAll(/```cedar\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toHaveLength(6);
    const docTools = [
      {
        name: 'refund',
        parameters: { type: 'object', properties: { orderId: { type: 'string' }, amount: { type: 'number' } } },
      },
      {
        name: 'send_email',
        parameters: { type: 'object', properties: { to: { type: 'string' }, body: { type: 'string' } } },
      },
      { name: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } },
    ];
    const set = new PolicySet(
      { text: Object.fromEntries(blocks.map((b, i) => [`example-${i + 1}.cedar`, b])) },
      docTools,
    );
    const decided = set.decide([
      request('refund', { orderId: 'A1', amount: 120 }),
      request('refund', { orderId: 'A1', amount: 80.5 }),
      request('send_email', { to: 'a@b.c' }, { toolCalls: { send_email: 3 } }),
      { ...request('bash', { command: 'ls' }), tenant: 'globex' },
      request('bash', { command: 'ls' }),
    ]).decisions;
    expect(decided.map((d) => d.decision)).toEqual(['ask', 'permit', 'forbid', 'forbid', 'permit']);
    expect(forbiddenText(decided[2])).toBe(
      page.match(/`(not run: the policy "three-emails-a-run"[^`]*)`/)![1].replace(/\n/g, ' '),
    );
  });
});

describe('delegation only narrows', () => {
  it('asks each agent a run works for, and a call is forbidden when any of their policies forbids it', () => {
    const state = {
      ...startRun({ message: 'go', agent: 'researcher' }, [], 'v1'),
      policies: { mode: 'enforce' as const, tenant: 'acme', delegatedBy: [{ agent: 'lead', tenant: 'acme' }] },
      phase: {
        kind: 'tools' as const,
        calls: [planned('1', 'bash', { command: 'ls' })],
      },
    } as RunState;
    const requests = policyRequests(state, (state.phase as { calls: PlannedToolCall[] }).calls);
    expect(requests.map((r) => [r.agent, r.caller])).toEqual([
      ['researcher', undefined],
      ['lead', 0],
    ]);
    const set = new PolicySet(
      {
        text: {
          p: `${BASE}\n@id("lead-runs-no-commands") forbid(principal == Agent::"lead", action, resource == Tool::"bash");`,
        },
      },
      tools,
    );
    const check = set.decide(requests);
    expect(check.decisions.map((d) => d.decision)).toEqual(['permit', 'forbid']);
    const after = applyPolicyCheck(state, check);
    expect((after.phase as { calls: PlannedToolCall[] }).calls[0].resolved?.result).toContain(
      'the policy "lead-runs-no-commands" forbids this call of bash',
    );
    // What the agents it calls work for: its callers, then itself.
    expect(delegationOf(state, { tenant: 'acme' })).toEqual([
      { agent: 'lead', tenant: 'acme' },
      { agent: 'researcher', tenant: 'acme' },
    ]);
  });
});

describe('whom a call from elsewhere works for', () => {
  it('takes a well-formed list from A2A metadata or MCP _meta, and nothing else', () => {
    const list = [{ agent: 'lead', tenant: 'acme' }, { agent: 'researcher' }];
    expect(delegatedByOf({ [DELEGATED_BY_KEY]: list })).toEqual(list);
    expect(delegatedByOf(undefined)).toBeUndefined();
    expect(delegatedByOf({ [DELEGATED_BY_KEY]: [] })).toBeUndefined();
    expect(delegatedByOf({ [DELEGATED_BY_KEY]: [{ agent: 3 }] })).toBeUndefined();
    expect(delegatedByOf({ [DELEGATED_BY_KEY]: Array.from({ length: 17 }, () => ({ agent: 'a' })) })).toBeUndefined();
    expect(delegatedByOf({ [DELEGATED_BY_KEY]: [{ agent: 'a', user: '' }] })).toBeUndefined();
    // An MCP server's call options carry it to the run it starts.
    expect(forCall({ taskQueue: 'q' } as never, { [DELEGATED_BY_KEY]: list })).toMatchObject({ delegatedBy: list });
    expect(forCall({ taskQueue: 'q' } as never, {})).not.toHaveProperty('delegatedBy');
  });
});

describe('actions besides callTool', () => {
  it("decides a workspace's command as runCommand and a call of an agent as delegate, as well as callTool", () => {
    const state = {
      ...startRun({ message: 'go', agent: 'lead' }, [], 'v1'),
      policies: { mode: 'enforce' as const },
      phase: {
        kind: 'tools' as const,
        calls: [
          planned('1', 'bash', { command: 'curl example.org' }, { workspace: true }),
          planned('2', 'bash', { command: 'ls' }, { workspace: true }),
          planned('3', 'ask_mailer', { message: 'send it' }, { agent: 'mailer' }),
        ],
      },
    } as RunState;
    const requests = policyRequests(state, (state.phase as { calls: PlannedToolCall[] }).calls);
    expect(requests.map((r) => [r.callId, r.action ?? 'callTool', r.tool])).toEqual([
      ['1', 'callTool', 'bash'],
      ['1', 'runCommand', 'bash'],
      ['2', 'callTool', 'bash'],
      ['2', 'runCommand', 'bash'],
      ['3', 'callTool', 'ask_mailer'],
      ['3', 'delegate', 'mailer'],
    ]);
    const set = new PolicySet(
      {
        text: {
          p: `${BASE}
@id("no-downloads") forbid(principal, action == Action::"runCommand", resource) when { context.args has command && context.args.command like "*curl*" };
@id("lead-does-not-mail") forbid(principal == Agent::"lead", action == Action::"delegate", resource == Agent::"mailer");`,
        },
      },
      [...tools, { name: 'ask_mailer', parameters: { type: 'object', properties: { message: { type: 'string' } } } }],
    );
    const after = applyPolicyCheck(state, set.decide(requests));
    const calls = (after.phase as { calls: PlannedToolCall[] }).calls;
    expect(calls[0].resolved?.result).toContain('the policy "no-downloads" forbids this call of bash');
    expect(calls[1].resolved).toBeUndefined();
    expect(calls[2].resolved?.result).toContain('the policy "lead-does-not-mail" forbids this call of ask_mailer');
    expect(after.policyDenied).toEqual({ bash: 1, ask_mailer: 1 });
  });
});

describe('grantNetwork', () => {
  it("grants a workspace's command each host of its allow-list, or runs it without the hosts not granted", () => {
    const base = startRun(
      { message: 'go', agent: 'coder', workspace: { network: ['pypi.org', 'evil.example'] } },
      [],
      'v1',
    );
    const state = {
      ...base,
      workspace: { ...base.workspace!, network: ['pypi.org', 'evil.example'] },
      policies: { mode: 'enforce' as const, tenant: 'globex' },
      phase: {
        kind: 'tools' as const,
        calls: [planned('1', 'bash', { command: 'pip download x' }, { workspace: true })],
      },
    } as RunState;
    const requests = policyRequests(state, (state.phase as { calls: PlannedToolCall[] }).calls);
    expect(requests.filter((r) => r.action === 'grantNetwork').map((r) => r.host)).toEqual([
      'pypi.org',
      'evil.example',
    ]);
    const set = new PolicySet(
      {
        text: {
          p: `${BASE}
@id("no-evil") forbid(principal, action == Action::"grantNetwork", resource == Host::"evil.example");`,
        },
      },
      tools,
    );
    const check = set.decide(requests);
    expect(check.decisions.filter((d) => d.action === 'grantNetwork').map((d) => [d.host, d.decision])).toEqual([
      ['pypi.org', 'permit'],
      ['evil.example', 'forbid'],
    ]);
    const after = applyPolicyCheck(state, check);
    const [call] = (after.phase as { calls: PlannedToolCall[] }).calls;
    // The call runs, without the host.
    expect(call.resolved).toBeUndefined();
    expect(call.deniedHosts).toEqual(['evil.example']);
    expect(grantedWorkspace(after.workspace!, call).network).toEqual(['pypi.org']);
  });
});

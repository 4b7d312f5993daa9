/**
 * What a policy decision costs the worker (issue 63's target: p99 ≤ 1 ms at 1,000 policies): one
 * reply's tool call decided by Cedar's engine, with a set of 10 and of 1,000 policies (a permit,
 * and forbids on the arguments and on the run so far, spread over 50 tools). The engine runs in
 * the decision's local activity, in the workflow task that goes on to run the call: no task is
 * added (the recorded history `policies.json` shows the marker in the same task).
 *
 * Run alone: `node --import tsx bench/policies.ts`; `npm run bench` runs it too.
 */
import { PolicySet } from '../src/policies/policy-set';
import type { PolicyRequest } from '../src/core/state/policy-types';

const DECISIONS = Number(process.env.BENCH_POLICY_DECISIONS ?? 5_000);

const tools = Array.from({ length: 50 }, (_, i) => ({
  name: `tool${i}`,
  parameters: {
    type: 'object',
    properties: { amount: { type: 'number' }, to: { type: 'string' }, n: { type: 'integer' } },
  },
}));

/**
 * `count` policies: one permit, then forbids and asks cycling over the tools and the ways they
 * test; every `unscopedEvery`-th names no tool (it applies to every call, so every decision
 * evaluates it), the others one tool each (a decision evaluates that tool's share only).
 */
function policies(count: number, unscopedEvery: number): string {
  const out = ['permit(principal, action, resource);'];
  for (let i = 1; i < count; i++) {
    const tool = `Tool::"tool${i % 50}"`;
    const ways = [
      `@id("p${i}") forbid(principal, action, resource == ${tool}) when { context.args has n && context.args.n > ${i} };`,
      `@id("p${i}") @decision("ask") forbid(principal, action, resource == ${tool}) when { context.args has amount && context.args.amount.greaterThan(decimal("${i}.5")) };`,
      `@id("p${i}") forbid(principal, action, resource == ${tool}) when { context.run.toolCalls has tool${i % 50} && context.run.toolCalls.tool${i % 50} >= ${(i % 5) + 2} };`,
      `@id("p${i}") forbid(principal, action, resource) when { principal has tenant && principal.tenant == "t${i}" && context.args has to && context.args.to == "x${i}" };`,
    ];
    out.push(i % unscopedEvery === 0 ? ways[3] : ways[i % 3]);
  }
  return out.join('\n');
}

function request(i: number): PolicyRequest {
  return {
    callId: `c${i}`,
    agent: 'clerk',
    tool: `tool${i % 50}`,
    tenant: `t${i % 97}`,
    context: {
      args: { amount: (i % 300) + 0.25, to: `x${i % 1000}`, n: i % 2000 },
      run: { toolCalls: { [`tool${i % 50}`]: i % 7 }, denied: {}, tokens: i * 10, costUsd: i / 1000, step: i % 20 },
      tenant: `t${i % 97}`,
    },
  };
}

/** p50 and p99 of one decision, in ms, with `count` policies. */
export function policyDecisionTimes(
  count: number,
  unscopedEvery: number,
): { p50: number; p99: number; loadMs: number } {
  const t0 = performance.now();
  const set = new PolicySet({ text: { 'bench.cedar': policies(count, unscopedEvery) } }, tools);
  const loadMs = performance.now() - t0;
  for (let i = 0; i < 200; i++) set.decide([request(i)]); // warm-up
  const times: number[] = [];
  for (let i = 0; i < DECISIONS; i++) {
    const start = performance.now();
    set.decide([request(i)]);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)], p99: times[Math.floor(times.length * 0.99)], loadMs };
}

export function policiesBench(): void {
  console.log('\n## Policy decisions (bench/policies.ts)\n');
  console.log('| policies | naming no tool | p50 per decision | p99 per decision | load and check at start | target |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const [count, every] of [
    [10, 4],
    [1_000, 100],
    [1_000, 4],
  ] as const) {
    const { p50, p99, loadMs } = policyDecisionTimes(count, every);
    const target = count === 1_000 && every === 100 ? `p99 ≤ 1 ms: ${p99 <= 1 ? 'met' : 'NOT MET'}` : '';
    const unscoped = Math.floor((count - 1) / every) + 1;
    console.log(
      `| ${count} | ${unscoped} | ${p50.toFixed(3)} ms | ${p99.toFixed(3)} ms | ${loadMs.toFixed(0)} ms | ${target} |`,
    );
  }
}

if (require.main === module) policiesBench();

import { canonicalListQuery } from '../../src/core/events/list-query';
import { agentListQuery } from '../../src/core/run/search-attributes';

/** The query as printed, or the problem. */
const canon = (q: string) => {
  const r = canonicalListQuery(q);
  return 'query' in r ? r.query : `PROBLEM: ${r.problem}`;
};

describe('a caller’s list query', () => {
  it('is read as Temporal reads it and printed again canonically', () => {
    expect(canon('AgentName=\'a\'   and  AgentStatus != "idle"')).toBe("AgentName = 'a' AND AgentStatus != 'idle'");
    expect(canon("ExecutionStatus = 'Running' OR (AgentIterations >= 3 AND AgentTotalTokens < -1)")).toBe(
      "ExecutionStatus = 'Running' OR (AgentIterations >= 3 AND AgentTotalTokens < -1)",
    );
    expect(canon("AgentName IN ('a', 'b') AND WorkflowId NOT IN ('x')")).toBe(
      "AgentName IN ('a', 'b') AND WorkflowId NOT IN ('x')",
    );
    expect(canon("StartTime BETWEEN '2026-01-01T00:00:00Z' AND '2026-02-01T00:00:00Z'")).toBe(
      "StartTime BETWEEN '2026-01-01T00:00:00Z' AND '2026-02-01T00:00:00Z'",
    );
    expect(canon("WorkflowId STARTS_WITH 'chat-' AND AgentVersion IS NOT NULL AND `My Attr` = true")).toBe(
      "WorkflowId STARTS_WITH 'chat-' AND AgentVersion IS NOT NULL AND `My Attr` = true",
    );
    // AND binds tighter than OR, and the printed query says so.
    expect(canon('a = 1 OR b = 2 AND c = 3')).toBe('a = 1 OR b = 2 AND c = 3');
    expect(canon('(a = 1 OR b = 2) AND c = 3')).toBe('(a = 1 OR b = 2) AND c = 3');
    expect(canon('x <> 1')).toBe('x != 1');
  });

  it('keeps escaped quotes and backslashes inside their string', () => {
    // Temporal reads \\' as an escaped quote and '' as one quote: so does this parser.
    expect(canon("WorkflowId = 'it\\'s'")).toBe("WorkflowId = 'it\\'s'");
    expect(canon("WorkflowId = 'it''s'")).toBe("WorkflowId = 'it\\'s'");
    expect(canon("WorkflowId = 'a\\\\'")).toBe("WorkflowId = 'a\\\\'");
    expect(canon('WorkflowId = "say \\"hi\\""')).toBe('WorkflowId = \'say "hi"\'');
  });

  it('never lets a query reach past the filters put before it', () => {
    const tenant = (query: string) => agentListQuery({ tenant: 'acme', query }, ['agentWorkflow']);
    // The attack seen on main: Temporal reads \\' as an escaped quote, so its ")" after the first
    // string closes the group the query is put in. Read the same way here, it is refused.
    const attack = "WorkflowId = 'a\\' ' ) OR ( AgentTenant = 'globex' ) OR ( WorkflowId = 'b\\' '";
    expect(canon(attack)).toMatch(/closes no "\("/);
    // Balanced, an OR stays inside the parentheses after the tenant's filter.
    expect(tenant("WorkflowId = 'x' OR AgentTenant = 'globex'")).toBe(
      "WorkflowType IN ('agentWorkflow') AND AgentTenant = 'acme' AND (WorkflowId = 'x' OR AgentTenant = 'globex')",
    );
    // Strings holding the attack's text stay strings: printed, they hold no unescaped quote.
    const inside = tenant(`WorkflowId = "a' ) OR ( AgentTenant = 'globex' ) OR ( x = 'b"`);
    expect(inside).toBe(
      "WorkflowType IN ('agentWorkflow') AND AgentTenant = 'acme' AND (WorkflowId = 'a\\' ) OR ( AgentTenant = \\'globex\\' ) OR ( x = \\'b')",
    );
    // Read back as Temporal reads it, the printed query has the same structure: a fixed point.
    const whole = inside.replace("WorkflowType IN ('agentWorkflow') AND ", '');
    expect(canon(whole)).toBe(whole);
    for (const hostile of [
      "AgentName = 'a') OR (1 = 1",
      "AgentName = 'a') OR ExecutionStatus = 'Running' OR (ExecutionStatus != 'Running'",
      "AgentName = 'a' /* ) OR ( */",
      "AgentName = 'a' -- ) OR (",
      "AgentName = 'a' # ) OR (",
      "AgentName = 'a\\",
      "AgentName = 'a",
      'AgentName = `x`` OR 1=1`',
      "AgentName = 'a' ORDER BY StartTime",
      "AgentName = 'a'; DROP TABLE x",
      '(((((((((((((((((((((((((((((((((a = 1)))))))))))))))))))))))))))))))))',
      'a = ',
      'NOT a = 1',
      ')',
      '',
      'x'.repeat(5_000),
    ])
      expect([hostile.slice(0, 60), canon(hostile)]).toEqual([
        hostile.slice(0, 60),
        expect.stringMatching(/^PROBLEM: /),
      ]);
  });

  it('names what is wrong', () => {
    expect(canon("AgentName = 'a")).toMatch(/a string is not closed/);
    expect(canon('AgentName')).toMatch(/expected a comparison after "AgentName", found the end of the query/);
    expect(canon("AgentName = 'a' ORDER BY x")).toMatch(/ORDER is not part of a list filter/);
    expect(canon("(AgentName = 'a'")).toMatch(/a "\(" is not closed/);
    expect(canon("AgentName = 'a')")).toMatch(/a "\)" closes no "\("/);
  });
});

import {
  fairnessWeightProblem,
  inScope,
  parseTenantToken,
  priorityKeyProblem,
  tenantFor,
  tenantProblem,
  workflowPriority,
} from '../../src/core/fleet/tenants';
import { validateAgentInput } from '../../src/core/run/run-input';

describe('tenants (pure)', () => {
  it('take names that fit a fairness key and need no quoting', () => {
    expect(tenantProblem('acme-eu.1_a')).toBeUndefined();
    expect(tenantProblem('x'.repeat(64))).toBeUndefined();
    expect(tenantProblem('x'.repeat(65))).toMatch(/at most 64/);
    expect(tenantProblem("a' OR 'b")).toMatch(/"tenant" must be a tenant name/);
    expect(tenantProblem('')).toMatch(/tenant name/);
    expect(validateAgentInput({ message: 'hi', tenant: 'bad tenant' })).toEqual([
      '"tenant" must be a tenant name (letters, digits, _ . -, at most 64), got "bad tenant"',
    ]);
    expect(validateAgentInput({ message: 'hi', priority: 0 })[0]).toMatch(/"priority" must be a whole number from 1/);
  });

  it('read AGENT_HTTP_TOKENS entries: a token, or a token bound to a tenant', () => {
    expect(parseTenantToken('0123456789abcdef0123')).toEqual({ token: '0123456789abcdef0123' });
    expect(parseTenantToken('0123456789abcdef0123=acme')).toEqual({ token: '0123456789abcdef0123', tenant: 'acme' });
    // Base64 padding is part of the token, not an empty tenant.
    expect(parseTenantToken('c2VjcmV0LXRva2VuLXZhbHVl==')).toEqual({ token: 'c2VjcmV0LXRva2VuLXZhbHVl==' });
    expect(parseTenantToken('c2VjcmV0LXRva2VuLXZhbHVl==acme')).toEqual({
      token: 'c2VjcmV0LXRva2VuLXZhbHVl=',
      tenant: 'acme',
    });
  });

  it('let an admin see everything and a tenant only its own', () => {
    expect(inScope({}, undefined)).toBe(true);
    expect(inScope({}, 'b')).toBe(true);
    expect(inScope({ tenant: 'a' }, 'a')).toBe(true);
    expect(inScope({ tenant: 'a' }, 'b')).toBe(false);
    expect(inScope({ tenant: 'a' }, undefined)).toBe(false);
  });

  it('start work as the caller’s tenant, refusing another', () => {
    expect(tenantFor({}, undefined)).toBeUndefined();
    expect(tenantFor({}, 'b')).toBe('b');
    expect(tenantFor({ tenant: 'a' }, undefined)).toBe('a');
    expect(tenantFor({ tenant: 'a' }, 'a')).toBe('a');
    expect(() => tenantFor({ tenant: 'a' }, 'b')).toThrow(/acts for tenant "a" and cannot start work for "b"/);
    expect(() => tenantFor({}, 'no spaces')).toThrow(/tenant name/);
  });

  it('give Temporal a priority only when something sets one', () => {
    expect(workflowPriority({})).toBeUndefined();
    expect(workflowPriority({ tenant: 'a' })).toEqual({ fairnessKey: 'a' });
    expect(workflowPriority({ tenant: 'a', fairnessWeight: 2, priorityKey: 1 })).toEqual({
      fairnessKey: 'a',
      fairnessWeight: 2,
      priorityKey: 1,
    });
    expect(priorityKeyProblem(6)).toMatch(/1 \(first\) to 5/);
    expect(priorityKeyProblem(2)).toBeUndefined();
    expect(fairnessWeightProblem(0)).toMatch(/0.001 to 1000/);
    expect(fairnessWeightProblem(2.5)).toBeUndefined();
  });
});

import { Message } from '@a2a-js/sdk';
import type { ListTasksRequest } from '@a2a-js/sdk';
import {
  filtersKey,
  historyLengthProblem,
  jsonRpcEnvelopeProblem,
  jsonRpcId,
  listTasksProblem,
  messageProblem,
  pageToken,
  readPageToken,
} from '../../src/a2a/request-checks';
import { assumeVersionFromMethod, isRootAgentPath, loopbackAsLocalhost, publicBase } from '../../src/a2a/request-edge';
import { httpServerSettingsFromEnv } from '../../src/http/server-settings';

const list = (p: Partial<ListTasksRequest>): ListTasksRequest =>
  ({ tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined, ...p }) as ListTasksRequest;

describe('A2A requests at the edge', () => {
  it('answers a malformed JSON-RPC envelope as an invalid request, with the id when it is a valid one', () => {
    expect(jsonRpcEnvelopeProblem({ jsonrpc: '2.0', method: 'GetTask', id: 1, params: {} })).toBeUndefined();
    expect(jsonRpcEnvelopeProblem({ jsonrpc: 'aaa', method: 'SendMessage' })).toMatch(/"jsonrpc" must be "2.0"/);
    expect(jsonRpcEnvelopeProblem({ jsonrpc: '2.0', id: 1 })).toMatch(/"method"/);
    expect(jsonRpcEnvelopeProblem({ jsonrpc: '2.0', method: 'GetTask', id: { bad: 1 } })).toMatch(/"id"/);
    expect(jsonRpcEnvelopeProblem([])).toMatch(/batches/);
    expect(jsonRpcId({ id: 'x' })).toBe('x');
    expect(jsonRpcId({ id: { bad: 1 } })).toBeNull();
  });

  it('refuses messages without parts or without the user role, and negative history lengths', () => {
    const ok = Message.fromJSON({ messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] });
    expect(messageProblem(ok)).toBeUndefined();
    expect(messageProblem({ ...ok, parts: [] })).toMatch(/no parts/);
    expect(messageProblem(Message.fromJSON({ messageId: 'm', parts: [{ text: 'hi' }] }))).toMatch(/no "role"/);
    expect(messageProblem(Message.fromJSON({ messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] }))).toMatch(
      /ROLE_USER/,
    );
    expect(historyLengthProblem(-1)).toMatch(/0 or more/);
    expect(historyLengthProblem(0)).toBeUndefined();
    expect(listTasksProblem(list({ historyLength: -1 }))).toMatch(/historyLength/);
    expect(listTasksProblem(list({ statusTimestampAfter: '-1' }))).toMatch(/ISO 8601/);
    expect(listTasksProblem(list({ statusTimestampAfter: '2026-11-28T10:00:00Z' }))).toBeUndefined();
  });

  it("gives page tokens that only this server's list with the same filters takes", () => {
    const filters = filtersKey(list({ contextId: 'c1' }), undefined);
    const token = pageToken({ offset: 50, filters });
    expect(readPageToken(token, filters)).toEqual({ offset: 50, filters });
    expect(readPageToken(token, filtersKey(list({ contextId: 'c2' }), undefined))).toHaveProperty('problem');
    expect(readPageToken(token, filtersKey(list({ contextId: 'c1' }), 'acme'))).toHaveProperty('problem');
    expect(readPageToken('invalid-token-xyz', filters)).toHaveProperty('problem');
  });

  it('names loopback hosts localhost, keeps others, and prefers the public URL', () => {
    expect(loopbackAsLocalhost('127.0.0.1:8080')).toBe('localhost:8080');
    expect(loopbackAsLocalhost('[::1]:9')).toBe('localhost:9');
    expect(loopbackAsLocalhost('agents.example.com')).toBe('agents.example.com');
    const req = { protocol: 'http', get: () => '127.0.0.1:3000' };
    expect(publicBase(req)).toBe('http://localhost:3000');
    expect(publicBase(req, 'https://agents.example.com/')).toBe('https://agents.example.com');
  });

  it('reads a 1.0 method without the A2A-Version header as 1.0, and a 0.3 method as 0.3', () => {
    const req = (body: unknown, headers: Record<string, string> = {}) =>
      ({ headers, body }) as unknown as Parameters<typeof assumeVersionFromMethod>[0];
    const v1 = req({ method: 'SendMessage' });
    assumeVersionFromMethod(v1);
    expect(v1.headers['a2a-version']).toBe('1.0');
    const legacy = req({ method: 'message/send' });
    assumeVersionFromMethod(legacy);
    expect(legacy.headers['a2a-version']).toBeUndefined();
    const asked = req({ method: 'SendMessage' }, { 'a2a-version': '0.3' });
    assumeVersionFromMethod(asked);
    expect(asked.headers['a2a-version']).toBe('0.3');
  });

  it("serves the default agent's paths at the root, and nothing else there", () => {
    expect(isRootAgentPath('GET', '/.well-known/agent-card.json')).toBe(true);
    expect(isRootAgentPath('POST', '/')).toBe(true);
    expect(isRootAgentPath('GET', '/')).toBe(false);
    expect(isRootAgentPath('POST', '/message:send')).toBe(true);
    expect(isRootAgentPath('GET', '/tasks/abc')).toBe(true);
    expect(isRootAgentPath('POST', '/tasks/abc:cancel')).toBe(true);
    expect(isRootAgentPath('GET', '/tasks')).toBe(true);
    expect(isRootAgentPath('POST', '/v1/message:send')).toBe(true);
    expect(isRootAgentPath('GET', '/tasksx')).toBe(false);
    expect(isRootAgentPath('GET', '/runs')).toBe(false);
  });

  it('reads AGENT_PUBLIC_URL, AGENT_A2A_DEFAULT and AGENT_A2A_MAX_BLOCKING_WAIT, naming the fix for bad values', () => {
    expect(
      httpServerSettingsFromEnv({
        AGENT_PUBLIC_URL: 'https://agents.example.com/',
        AGENT_A2A_DEFAULT: 'writer',
        AGENT_A2A_MAX_BLOCKING_WAIT: '30s',
      }),
    ).toEqual({ publicUrl: 'https://agents.example.com', a2a: { defaultAgent: 'writer', maxBlockingWaitMs: 30_000 } });
    expect(() => httpServerSettingsFromEnv({ AGENT_PUBLIC_URL: 'agents.example.com' })).toThrow(/AGENT_PUBLIC_URL/);
    expect(() => httpServerSettingsFromEnv({ AGENT_PUBLIC_URL: 'ftp://x' })).toThrow(/http or https/);
    expect(() => httpServerSettingsFromEnv({ AGENT_A2A_DEFAULT: 'no spaces' })).toThrow(/AGENT_A2A_DEFAULT/);
    expect(() => httpServerSettingsFromEnv({ AGENT_A2A_MAX_BLOCKING_WAIT: '30' })).toThrow(/add a unit/);
    expect(httpServerSettingsFromEnv({ AGENT_MCP_STATE_KEY: 'k'.repeat(32) })).toEqual({ mcpStateKey: 'k'.repeat(32) });
    expect(() => httpServerSettingsFromEnv({ AGENT_MCP_STATE_KEY: 'short' })).toThrow(
      /AGENT_MCP_STATE_KEY: 5 characters is too short to sign with: use at least 32/,
    );
    // gRPC: a port, and where clients dial it (host:port, no scheme).
    expect(httpServerSettingsFromEnv({ AGENT_A2A_GRPC_PORT: '3003', AGENT_A2A_GRPC_URL: 'a.example.com:443' })).toEqual(
      {
        a2a: { grpc: { port: 3003, url: 'a.example.com:443' } },
      },
    );
    expect(() => httpServerSettingsFromEnv({ AGENT_A2A_GRPC_PORT: 'x' })).toThrow(/give a number from 1 to 65535/);
    expect(() =>
      httpServerSettingsFromEnv({ AGENT_A2A_GRPC_PORT: '3003', AGENT_A2A_GRPC_URL: 'https://a.example.com' }),
    ).toThrow(/not host:port, as gRPC clients dial it/);
    expect(() => httpServerSettingsFromEnv({ AGENT_A2A_GRPC_URL: 'a.example.com:443' })).toThrow(
      /without AGENT_A2A_GRPC_PORT/,
    );
  });
});

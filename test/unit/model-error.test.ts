import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure, defaultFailureConverter, defaultPayloadConverter } from '@temporalio/common';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { classifyModelError, ModelCallError, MODEL_ERROR_KINDS, retryAfterMs } from '../../src/models/model-error';
import { OPENAI_ERRORS } from '../../src/models/openai/openai-errors';
import { modelCallFailure } from '../../src/activities/model-failure';

/** What the model-call activity makes of an SDK error: the adapter's classification, then the activity edge's failure. */
const failureOf = (err: unknown, where = endpoint) =>
  modelCallFailure(classifyModelError(err, where, OPENAI_ERRORS)) as ApplicationFailure;

const endpoint = { baseURL: 'http://llm.local/v1', model: 'm1' };
const http = (status: number, headers: Record<string, string> = {}, code?: string) =>
  // `generate` takes the whole response body, as the client does.
  failureOf(APIError.generate(status, { error: { message: 'nope', code } }, undefined, new Headers(headers)));

describe('classifyModelError', () => {
  it.each([
    [408, 'ModelCall.Timeout'],
    [409, 'ModelCall.Conflict'],
    [429, 'ModelCall.RateLimit'],
    [500, 'ModelCall.ServerError'],
    [503, 'ModelCall.ServerError'],
  ])('HTTP %i is retryable (%s)', (status, type) => {
    const f = http(status);
    expect(f).toBeInstanceOf(ApplicationFailure);
    expect(f).toMatchObject({ type, nonRetryable: false });
  });

  it.each([
    [400, 'ModelCall.BadRequest', /rejected the request/],
    [401, 'ModelCall.Auth', /check OPENAI_API_KEY/],
    [403, 'ModelCall.PermissionDenied', /may use model "m1"/],
    [404, 'ModelCall.NotFound', /check AGENT_MODEL \(or the agent.s model\), and that OPENAI_BASE_URL ends in \/v1/],
    [422, 'ModelCall.BadRequest', /HTTP 422/],
  ])('HTTP %i fails at once (%s)', (status, type, message) => {
    const f = http(status);
    expect(f).toMatchObject({ type, nonRetryable: true });
    expect(f.message).toMatch(message);
  });

  it('treats an exhausted quota (429 insufficient_quota) as final', () => {
    expect(http(429, {}, 'insufficient_quota')).toMatchObject({ type: 'ModelCall.QuotaExceeded', nonRetryable: true });
  });

  it('passes the server-requested delay on as the next retry delay', () => {
    // The SDK normalises the duration it was given into milliseconds.
    expect(http(429, { 'retry-after': '7' }).nextRetryDelay).toBe(7000);
    expect(http(503, { 'retry-after-ms': '250' }).nextRetryDelay).toBe(250);
    expect(http(503).nextRetryDelay).toBeUndefined();
  });

  it('names the socket error behind "fetch failed"', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const conn = failureOf(
      new APIConnectionError({
        message: 'Connection error.',
        cause: new TypeError('fetch failed', { cause: refused }),
      }),
    );
    expect(conn.message).toBe(
      'could not reach the model server at http://llm.local/v1 (connection refused); check OPENAI_BASE_URL and that the server is running',
    );
  });

  it('retries connection failures and timeouts, naming the server', () => {
    const conn = failureOf(new APIConnectionError({ message: 'Connection error.', cause: new Error('ECONNREFUSED') }));
    expect(conn).toMatchObject({ type: 'ModelCall.Connection', nonRetryable: false });
    expect(conn.message).toContain('could not reach the model server at http://llm.local/v1 (ECONNREFUSED)');
    expect(failureOf(new APIConnectionTimeoutError())).toMatchObject({
      type: 'ModelCall.Timeout',
      nonRetryable: false,
    });
  });
});

describe("ModelCallError, the seam's failure", () => {
  it('knows no Temporal: each kind says its errorType and whether to try again; the activity edge makes the failure', () => {
    const err = new ModelCallError('rate_limited', 'slow down', { retryAfterMs: 1500 });
    expect(err).not.toBeInstanceOf(ApplicationFailure);
    expect({ type: err.type, retryable: err.retryable, retryAfterMs: err.retryAfterMs }).toEqual({
      type: 'ModelCall.RateLimit',
      retryable: true,
      retryAfterMs: 1500,
    });
    expect(modelCallFailure(err)).toMatchObject({
      type: 'ModelCall.RateLimit',
      nonRetryable: false,
      nextRetryDelay: 1500,
    });
    expect(modelCallFailure(new ModelCallError('auth', 'bad key'))).toMatchObject({
      type: 'ModelCall.Auth',
      nonRetryable: true,
    });
    // Every kind's errorType is a ModelCall.* type, once.
    const types = Object.values(MODEL_ERROR_KINDS).map((k) => k.type);
    expect(new Set(types).size).toBe(types.length);
    expect(types.every((t) => t.startsWith('ModelCall.'))).toBe(true);
  });

  it("keeps the failure within the server's 4 KB for an activity failure: the SDK's error chain stays out", () => {
    // The server replaces a larger activity failure with "Failure exceeds size limit.", and the
    // person watching a retrying run would never learn that the model server is unreachable.
    let cause: Error = new Error('bad port');
    for (let i = 0; i < 5; i++) {
      const wrapped = new Error(`layer ${i}`, { cause });
      wrapped.stack = `${wrapped.message}\n${'    at somewhere (/a/long/path/to/node_modules/sdk/src/client.ts:845:13)\n'.repeat(20)}`;
      cause = wrapped;
    }
    const err = new ModelCallError('connection', 'could not reach the model server at http://127.0.0.1:1/v1', {
      cause,
    });
    const failure = defaultFailureConverter.errorToFailure(modelCallFailure(err), defaultPayloadConverter);
    expect(failure.message).toBe('could not reach the model server at http://127.0.0.1:1/v1');
    expect(failure.applicationFailureInfo?.type).toBe('ModelCall.Connection');
    expect(JSON.stringify(failure).length).toBeLessThan(4096);
  });
});

describe('classifyModelError on replies the real client cannot read', () => {
  // A loopback server answers 200 with a broken body; the real `openai` client reads it.
  const server = createServer((req, res) => {
    if (req.url!.startsWith('/cut/')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"id":"x","choices":[{"mess');
      setTimeout(() => res.destroy(), 20);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"id":"x","choices":[{"message":{"content":"unterminated');
  });
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const classifyReply = async (path: string) => {
    const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${path}`;
    const client = new OpenAI({ apiKey: 'k', baseURL, maxRetries: 0 });
    const err = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    return failureOf(err, { baseURL, model: 'm' });
  };

  it('classifies malformed JSON as ModelCall.InvalidResponse, retryable', async () => {
    const f = await classifyReply('bad');
    expect(f).toMatchObject({ type: 'ModelCall.InvalidResponse', nonRetryable: false });
    expect(f.message).toMatch(/sent a reply that is not valid JSON \(Unterminated string/);
  });

  it('classifies a reply cut off mid-body as ModelCall.InvalidResponse, retryable', async () => {
    const f = await classifyReply('cut');
    expect(f).toMatchObject({ type: 'ModelCall.InvalidResponse', nonRetryable: false });
    expect(f.message).toMatch(/closed the connection before its reply was complete \(other side closed\)/);
  });
});

describe('retryAfterMs', () => {
  const h = (v: Record<string, string>) => new Headers(v);
  it('reads seconds, milliseconds and HTTP dates', () => {
    expect(retryAfterMs(h({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(h({ 'retry-after-ms': '150', 'retry-after': '9' }))).toBe(150);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs(h({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).toBe(5000);
  });
  it('ignores absent, past and garbage values', () => {
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs(h({}))).toBeUndefined();
    expect(retryAfterMs(h({ 'retry-after': '0' }))).toBeUndefined();
    expect(retryAfterMs(h({ 'retry-after': 'soon' }))).toBeUndefined();
  });
});

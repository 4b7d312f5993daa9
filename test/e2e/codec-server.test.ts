import { randomBytes, randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { freePort } from '../../src/connection/dev-server';
import { findTemporalCli } from '../../src/connection/temporal-cli';
import { cleanEnv, runTs, startTs } from '../helpers/processes';
import { answer, call, lastOf, startModel } from '../helpers/scripted-model';

/**
 * Encryption end to end: worker.ts and client.ts with AGENT_ENCRYPTION_KEYS, the stored history
 * unreadable to a plain `temporal workflow show`, and readable through `npm run codec-server`
 * (the Temporal CLI's --codec-endpoint, and the UI's requests: CORS, its own token).
 */
const run = promisify(execFile);

describe('encrypted payloads and the codec server', () => {
  it('worker and client encrypt; the codec server decrypts for the temporal CLI and the UI with its own token', async () => {
    const llm = await startModel((req) =>
      req.messages[req.messages.length - 1].role === 'tool'
        ? answer(`PLAIN-ANSWER ${lastOf(req, 'tool')}`)
        : call(['add', { a: 20, b: 22 }]),
    );
    const keys = `k1:${randomBytes(32).toString('base64')}`;
    const codecToken = 'codec-token-0123456789';
    const address = process.env.TEST_TEMPORAL_ADDRESS!;
    const env = cleanEnv({
      TEMPORAL_ADDRESS: address,
      AGENT_TASK_QUEUE: `e2e-enc-${randomUUID()}`,
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'e2e',
      AGENT_ENCRYPTION_KEYS: keys,
      // Its ledgers are encrypted: a fleet queue of its own (the other tests' ledgers are not).
      AGENT_FLEET_TASK_QUEUE: `e2e-enc-fleet-${randomUUID()}`,
    });
    const worker = await startTs(['worker.ts'], env, /Press Ctrl\+C/);
    const codecPort = await freePort();
    const codec = await startTs(
      ['codec-server.ts'],
      cleanEnv({ AGENT_ENCRYPTION_KEYS: keys, AGENT_CODEC_TOKENS: codecToken, CODEC_PORT: String(codecPort) }),
      /Press Ctrl\+C/,
    );
    try {
      expect(worker.output()).toContain('Payloads are encrypted (AGENT_ENCRYPTION_KEYS)');
      const r = await runTs(['client.ts', 'run', 'PLAIN-QUESTION add 20 and 22', '--json'], env);
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ status: 'completed', content: 'PLAIN-ANSWER 42' });
      expect(out.workflowId).toMatch(/^agent-[0-9a-f]{12}$/);
      const cli = findTemporalCli(process.env);
      // The history as the CLI prints it (JSON, payload data in base64), with every payload's data decoded.
      const show = (...extra: string[]) =>
        run(cli, ['workflow', 'show', '--address', address, '-w', out.workflowId, '--output', 'json', ...extra]).then(
          (x) =>
            [...x.stdout.matchAll(/"data": "([A-Za-z0-9+/=]*)"/g)]
              .map((m) => Buffer.from(m[1], 'base64').toString('latin1'))
              .join('\n'),
        );
      // Without the codec: ciphertext only.
      expect(await show()).not.toMatch(/PLAIN-QUESTION|PLAIN-ANSWER/);
      // Through the codec server, with its token: the run as it was.
      const endpoint = `http://127.0.0.1:${codecPort}`;
      const decoded = await show('--codec-endpoint', endpoint, '--codec-auth', `Bearer ${codecToken}`);
      expect(decoded).toContain('PLAIN-QUESTION add 20 and 22');
      expect(decoded).toContain('PLAIN-ANSWER 42');
      // Without the token the codec server refuses (the CLI retries until its timeout, then fails).
      const refused = await show('--codec-endpoint', endpoint, '--command-timeout', '2s').then(
        (text) => `no error: ${text}`,
        (err: { stderr?: string }) => `failed: ${err.stderr ?? ''}`,
      );
      expect(refused).toMatch(/^failed: /);
      expect(refused).not.toContain('PLAIN-QUESTION');
      // The UI's requests: a preflight from its origin, then the cookie a browser gets from /?access_token=.
      const preflight = await fetch(`${endpoint}/decode`, {
        method: 'OPTIONS',
        headers: {
          origin: 'http://localhost:8233',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-namespace',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
      expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('x-namespace');
      const cookie = (await fetch(`${endpoint}/?access_token=${codecToken}`)).headers.get('set-cookie')!.split(';')[0];
      const sealed = {
        payloads: [
          {
            metadata: { encoding: Buffer.from('json/plain').toString('base64') },
            data: Buffer.from('"hello"').toString('base64'),
          },
        ],
      };
      const encoded = (await (
        await fetch(`${endpoint}/encode`, {
          method: 'POST',
          headers: { cookie, origin: 'http://localhost:8233' },
          body: JSON.stringify(sealed),
        })
      ).json()) as typeof sealed;
      expect(Buffer.from(encoded.payloads[0].metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
      const back = (await (
        await fetch(`${endpoint}/decode`, { method: 'POST', headers: { cookie }, body: JSON.stringify(encoded) })
      ).json()) as typeof sealed;
      expect(Buffer.from(back.payloads[0].data, 'base64').toString()).toBe('"hello"');
      expect((await fetch(`${endpoint}/decode`, { method: 'POST', body: JSON.stringify(encoded) })).status).toBe(401);
      expect((await fetch(`${endpoint}/decode`, { method: 'POST', headers: { cookie }, body: 'nope' })).status).toBe(
        400,
      );
      for (const payloads of [[null], [{ data: 5 }], [{ metadata: { encoding: 1 } }]]) {
        const shapeless = await fetch(`${endpoint}/decode`, {
          method: 'POST',
          headers: { cookie },
          body: JSON.stringify({ payloads }),
        });
        expect(shapeless.status).toBe(400);
        expect(await shapeless.json()).toMatchObject({
          error: expect.stringContaining('payloads[0] is not a payload'),
        });
      }

      // A client without the keys: the worker refuses its run, and the client says why instead of waiting in silence.
      const keyless = await runTs(['client.ts', 'run', 'PLAIN-TEXT from a client without keys', '--wait', '8s'], {
        ...env,
        AGENT_ENCRYPTION_KEYS: '',
      });
      expect(keyless.code).toBe(3);
      expect(keyless.stderr).toContain(
        'The run makes no progress: its workers fail its workflow tasks: a payload is not encrypted, and this worker requires encryption (AGENT_ENCRYPTION_KEYS is set)',
      );
      expect(llm.requests.filter((q) => lastOf(q, 'user').includes('without keys'))).toEqual([]);
    } finally {
      worker.kill('SIGTERM');
      codec.kill('SIGTERM');
      await Promise.all([worker.exited, codec.exited]);
      await llm.close();
    }
  });

  it('refuses to start without keys, with bad keys, or exposed without a token; a client with other keys cannot read', async () => {
    const none = await runTs(['codec-server.ts'], cleanEnv({ CODEC_PORT: '0' }));
    expect(none.code).toBe(2); // a server that cannot start: a configuration mistake
    expect(none.stderr).toContain(
      "codec-server: AGENT_ENCRYPTION_KEYS is not set: the codec server decrypts with the workers' keys",
    );
    const exposed = await runTs(
      ['codec-server.ts'],
      cleanEnv({
        AGENT_ENCRYPTION_KEYS: `k:${randomBytes(32).toString('base64')}`,
        CODEC_HOST: '0.0.0.0',
        CODEC_PORT: '0',
      }),
    );
    expect(exposed.code).toBe(2); // a server that cannot start: a configuration mistake
    expect(exposed.stderr).toContain(
      'CODEC_HOST=0.0.0.0 would let anyone on the network decrypt: set AGENT_CODEC_TOKENS',
    );
    const bad = await runTs(
      ['client.ts', 'status', 'x'],
      cleanEnv({ AGENT_ENCRYPTION_KEYS: 'k1:abc', TEMPORAL_ADDRESS: '127.0.0.1:1' }),
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('AGENT_ENCRYPTION_KEYS: key "k1" is 2 bytes once base64-decoded; AES-256 needs 32');
  });
});

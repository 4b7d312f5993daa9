import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createCodecServer } from '../../src/http/codec-server';
import { EncryptionCodec } from '../../src/codec/encryption-codec';
import { createHttpApi } from '../../src/http/http-api';
import type { HttpAccessOptions } from '../../src/http/access';
import { createMcpHttpServer } from '../../src/mcp-server/mcp-http-server';
import { useTestTemporal } from '../helpers/temporal';

/**
 * Hostile input against every server of the package (HTTP API, MCP over HTTP, codec server),
 * with and without tokens: malformed request lines, cookies, headers, percent-escapes and
 * bodies. Each request gets a 4xx, and the server answers the next request. One of these used
 * to end the process (`Cookie: durable_agents_token=%`: a URIError before the token was checked).
 */
const temporal = useTestTemporal();
const TOKEN = 'fuzz-token-0123456789abcdef';

/** Sends raw bytes and reads the status of the answer (undefined: the connection closed without one). */
function raw(port: number, request: string | Buffer): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('data', (d) => {
      received += d.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received);
      if (status && received.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(Number(status[1]));
      }
    });
    socket.on('close', () =>
      resolve(/^HTTP\/1\.1 (\d{3})/.exec(received) ? Number(/^HTTP\/1\.1 (\d{3})/.exec(received)![1]) : undefined),
    );
    socket.on('error', () => undefined);
    socket.write(request);
  });
}

const H = 'Host: localhost\r\nConnection: close\r\n';
const get = (target: string, headers = '') => `GET ${target} HTTP/1.1\r\n${H}${headers}\r\n`;
const post = (target: string, body: string | Buffer, headers = 'Content-Type: application/json\r\n') =>
  Buffer.concat([
    Buffer.from(
      `POST ${target} HTTP/1.1\r\n${H}${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
      'latin1',
    ),
    Buffer.isBuffer(body) ? body : Buffer.from(body),
  ]);

/** Requests no server of ours may answer with anything but a 4xx (those named `(any)`: anything but a 5xx). */
function hostile(paths: string[]): Array<[string, string | Buffer]> {
  const cases: Array<[string, string | Buffer]> = [
    ['absolute target with a broken host', `GET http://[ HTTP/1.1\r\n${H}\r\n`],
    ['scheme-relative target with a broken host', `GET //[ HTTP/1.1\r\n${H}\r\n`],
    ['unknown method', `BREW /coffee HTTP/1.1\r\n${H}\r\n`],
    ['no request line', 'GARBAGE\r\n\r\n'],
    ['HTTP/9.9', `GET / HTTP/9.9\r\n${H}\r\n`],
    ['a bad chunk', `POST /x HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\nzz\r\n\r\n`],
    ['two content lengths', `POST /x HTTP/1.1\r\n${H}Content-Length: 1\r\nContent-Length: 2\r\n\r\nab`],
    ['(any) a token of a percent sign', get('/?access_token=%')],
  ];
  for (const path of paths) {
    cases.push(
      [`${path}: cookie %`, get(path, 'Cookie: durable_agents_token=%\r\n')],
      [`${path}: cookie %E0%A4%A`, get(path, 'Cookie: durable_agents_token=%E0%A4%A\r\n')],
      [`${path}: cookie soup`, get(path, 'Cookie: ;;;=; durable_agents_token; =x; durable_agents_token==\r\n')],
      [`${path}: empty bearer`, get(path, 'Authorization: Bearer\r\n')],
      [`${path}: bearer of bytes`, Buffer.from(get(path, 'Authorization: Bearer \xff\xfe%00\r\n'), 'latin1')],
      [`${path}: header of high bytes`, Buffer.from(get(path, 'X-Thing: \x80\x81\xff\r\n'), 'latin1')],
      [`${path}: a malformed escape in the path`, get(`${path}/%E0%A4%A`)],
      [`${path}: %zz`, get(`${path}%zz`)],
      [`${path}: an id with a newline`, get(`${path}/a%0Ab`)],
      [`${path}: not JSON`, post(path, '{"message":')],
      [`${path}: JSON nested 100,000 deep`, post(path, '['.repeat(100_000))],
      [`${path}: not UTF-8`, post(path, Buffer.from([0xff, 0xfe, 0x7b, 0x00]))],
      [`${path}: a message of the wrong type`, post(path, '{"message":{"a":1},"payloads":7}')],
      [`${path}: a body of 2 MB`, post(path, `{"message":"${'x'.repeat(2_000_000)}"}`)],
      [`${path}: wait of 99999999 days`, post(`${path}?wait=99999999d`, '{"message":"hi"}')],
      [`${path}: after 1e15`, get(`${path}/x/events?after=1e15`, 'Last-Event-ID: 1e15\r\n')],
    );
  }
  return cases;
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Every hostile request gets a 4xx (or, for the few Node's parser refuses, a closed connection), and then `healthy` still works. */
async function expectSurvives(
  server: Server,
  paths: string[],
  healthy: (port: number) => Promise<void>,
): Promise<void> {
  const port = await listen(server);
  try {
    const answers: Record<string, number | undefined> = {};
    for (const [name, request] of hostile(paths)) answers[name] = await raw(port, request);
    // A plain GET of a list (`GET /runs`) with odd headers is still a list: without tokens, 200.
    const listRead = (name: string) =>
      /^\/(runs|conversations): (cookie|empty bearer|bearer of bytes|header of high bytes)/.test(name);
    const wrong = Object.entries(answers).filter(
      ([name, status]) =>
        status !== undefined && (status >= 500 || (status < 400 && !name.startsWith('(any)') && !listRead(name))),
    );
    expect(wrong).toEqual([]);
    // Node answers what its parser refuses with 400; a silent close is allowed only there.
    expect(Object.values(answers).filter((s) => s === undefined).length).toBeLessThanOrEqual(2);
    await healthy(port);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

const openAccess: HttpAccessOptions = {};
const tokenAccess: HttpAccessOptions = { tokens: [TOKEN], rateLimitPerMinute: 100_000 };

describe.each([
  ['without tokens', openAccess],
  ['with tokens', tokenAccess],
])('hostile requests %s', (_, access) => {
  const auth: Record<string, string> = access.tokens ? { authorization: `Bearer ${TOKEN}` } : {};

  it('the HTTP API answers each with a 4xx and keeps serving', async () => {
    const api = createHttpApi({ client: temporal().client, taskQueue: 'fuzz-nobody', access });
    await expectSurvives(api, ['/runs', '/conversations', '/conversations/c/messages'], async (port) => {
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      const missing = await fetch(`http://127.0.0.1:${port}/runs/no-such-run`, { headers: auth });
      expect(missing.status).toBe(404);
    });
  });

  it('the MCP server over HTTP answers each with a 4xx and keeps serving', async () => {
    const mcp = createMcpHttpServer({ client: temporal().client, taskQueue: 'fuzz-nobody', agents: [] }, access);
    await expectSurvives(mcp, ['/mcp', '/other'], async (port) => {
      const init = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
        }),
      });
      expect(init.status).toBe(200);
    });
  });

  it('the codec server answers each with a 4xx and keeps serving', async () => {
    const codec = createCodecServer({ codec: new EncryptionCodec([{ id: 'k1', key: Buffer.alloc(32, 7) }]), access });
    await expectSurvives(codec, ['/decode', '/encode'], async (port) => {
      const decoded = await fetch(`http://127.0.0.1:${port}/encode`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ payloads: [{ metadata: {}, data: '' }] }),
      });
      expect(decoded.status).toBe(200);
    });
  });
});

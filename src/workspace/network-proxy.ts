import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { hostAllowed, localAddressProblem } from '../core/workspace/workspace-options';

/**
 * The way out of a sandbox whose workspace allows some hosts (`workspace.network`): the sandbox
 * has no network of its own, only a bridge from its loopback (port {@link PROXY_PORT}, which
 * `HTTP_PROXY` and `HTTPS_PROXY` name) to this proxy's Unix socket. The proxy admits HTTP
 * requests and `CONNECT` tunnels (HTTPS) to allowed hosts and answers 403 for others, so what
 * leaves is what the allow-list names, by host name. Hand-written: a few dozen lines over
 * `node:http`, where a package for it would bring a server of its own.
 */

/** The port the bridge listens on inside the sandbox. */
export const PROXY_PORT = 3128;

/** The bridge, run inside the sandbox by the worker's Node: loopback to the proxy's socket. */
export const BRIDGE_SCRIPT = `const net = require('net');
const socket = process.argv[2];
net.createServer((c) => {
  const u = net.connect(socket);
  c.pipe(u); u.pipe(c);
  u.on('error', () => c.destroy()); c.on('error', () => u.destroy());
}).listen(${PROXY_PORT}, '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

/** A running proxy: its socket, and how to stop it. */
export interface NetworkProxy {
  socketPath: string;
  close(): Promise<void>;
}

/** Starts a proxy that admits the hosts `allowed` names (see `hostAllowed`). */
export async function startNetworkProxy(allowed: readonly string[]): Promise<NetworkProxy> {
  const dir = await mkdtemp(join(tmpdir(), 'durable-agents-proxy-'));
  const socketPath = join(dir, 'proxy.sock');
  const sockets = new Set<Socket>();
  const refuse = (host: string) =>
    `the sandbox may not reach ${host}: it is not in the workspace's network allow-list (workspace.network)`;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('the proxy takes absolute URLs (http://host/path)\n');
      return;
    }
    if (!hostAllowed(url.hostname, allowed)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`${refuse(url.hostname)}\n`);
      return;
    }
    const lookup = guardedLookup(allowed);
    const upstream = request(url, { method: req.method, headers: endToEnd(req.headers), lookup }, (up) => {
      res.writeHead(up.statusCode ?? 502, endToEnd(up.headers));
      up.pipe(res);
    });
    upstream.on('error', (e) => res.writeHead(502).end(`${e.message}\n`));
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const [host, portText] = (req.url ?? '').split(/:(?=\d+$)/);
    if (!host || !hostAllowed(host, allowed)) {
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${refuse(host ?? '')}\n`);
      return;
    }
    const upstream = connect({ port: Number(portText) || 443, host, lookup: guardedLookup(allowed) }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream).add(client);
    const done = () => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', (e) =>
      client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\n${e.message}\n`),
    );
    client.on('error', done);
    upstream.on('close', () => sockets.delete(upstream));
    client.on('close', () => sockets.delete(client));
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socketPath, resolve));
  // The sandbox's user (not the worker's, when that is root) connects to it.
  await chmod(dir, 0o755);
  await chmod(socketPath, 0o777);
  return {
    socketPath,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * DNS lookup for upstream connections that refuses the worker's own addresses (see
 * `localAddressProblem`). The connection goes to the address checked here, so a name cannot
 * resolve elsewhere between the check and the connect.
 */
function guardedLookup(allowed: readonly string[]) {
  return (
    hostname: string,
    options: object,
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      for (const { address } of addresses) {
        const problem = localAddressProblem(hostname, address, allowed);
        if (problem) return callback(new Error(problem), []);
      }
      if ((options as { all?: boolean }).all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * Headers without the hop-by-hop ones (RFC 9110, 7.6.1), which a proxy must not pass on: an
 * upstream's `connection: keep-alive` would hold the sandbox's HTTP/1.0 client open until the
 * proxy's idle timeout.
 */
function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name.toLowerCase())) out[name] = value;
  return out;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

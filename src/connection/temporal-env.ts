import { createConnection } from 'node:net';
import { join } from 'node:path';
import { Client, type ConnectionOptions } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnection, NativeConnectionOptions } from '@temporalio/worker';
import { holdRedisLiveChannel } from '../storage/redis-live-bridge';
import { flushTracing, installTracing } from '../telemetry/tracing';
import { clientSettings, type ClientSettings } from './settings';
import { connectClient } from './client-connection';
import { startDevServer } from './dev-server';
import { dataDir } from './temporal-cli';

/** A connection to Temporal, for clients and workers alike. */
export interface TemporalEnv {
  client: Client;
  /** For workers. */
  nativeConnection: NativeConnection;
  namespace: string;
  /** Web UI base URL, when known. */
  uiUrl?: string;
  /** How we got here, for messages: a configured cluster, a dev server we started, or one already running. */
  mode: 'configured' | 'embedded-started' | 'embedded-reused';
  address: string;
  /** The SQLite file of a dev server we started (absent: in memory, or not ours). */
  dbFilename?: string;
  /** Whether the client encrypts payloads (`AGENT_ENCRYPTION_KEYS`). */
  encrypted: boolean;
  close(): Promise<void>;
}

/** How the embedded dev server is used when `TEMPORAL_ADDRESS` is unset. */
export interface EmbeddedOptions {
  /** Keep data in `.temporal/dev.db` (default) instead of memory. */
  persistent?: boolean;
  /** Fixed port (default `AGENT_DEV_SERVER_PORT` or 7233); a server already there is reused. `0`: any free port, in memory. */
  port?: number;
  /**
   * `false`: only use a dev server that is already running (a client of someone else's worker,
   * which runs the server); with none, fail saying how to get one, instead of starting a server
   * no worker will ever poll. Default true.
   */
  start?: boolean;
  /**
   * Where to say which dev server is used (its address, data and Web UI): a function taking one
   * line at a time, or `false` for silence. Default: stderr. Configured clusters are not announced.
   */
  announce?: ((line: string) => void) | false;
  /**
   * `false`: no worker will run on this connection (a command-line client of other workers): the
   * worker connection is not opened, and the worker SDK not loaded. Default true.
   */
  worker?: boolean;
}

const DEFAULT_DEV_PORT = 7233;

/**
 * With `TEMPORAL_ADDRESS` set: connects there, with namespace, TLS and API key from the standard
 * `TEMPORAL_*` environment configuration (`@temporalio/envconfig`). Without it: reuses a dev
 * server already listening on the dev port (e.g. one `npm start` runs), or starts one from the
 * Temporal CLI with its data in a git-ignored SQLite file and the Web UI on port + 1000.
 * `settings` are what the environment says (default: {@link clientSettings} of the process's).
 */
export async function connectTemporal(
  options: EmbeddedOptions = {},
  settings: ClientSettings = clientSettings(),
): Promise<TemporalEnv> {
  const { env } = settings;
  const open = (
    connectionOptions: NativeConnectionOptions,
    meta: Pick<TemporalEnv, 'namespace' | 'address' | 'mode' | 'uiUrl' | 'dbFilename'>,
    afterClose?: () => Promise<void>,
  ) => openConnections(connectionOptions, meta, settings, options.worker !== false, afterClose);
  if (settings.address) {
    const config = loadClientConnectConfig({ overrideEnvVars: env as Record<string, string> });
    const namespace = config.namespace ?? 'default';
    const address = config.connectionOptions.address ?? settings.address;
    try {
      return await open(config.connectionOptions, {
        namespace,
        address,
        mode: 'configured',
        uiUrl: uiBaseUrl(address, settings.uiUrl),
      });
    } catch (err) {
      throw new Error(
        `could not connect to Temporal at TEMPORAL_ADDRESS=${address} (namespace ${namespace}): ${connectProblem(err)}`,
      );
    }
  }
  const port = options.port ?? (settings.devServer.port || DEFAULT_DEV_PORT);
  const uiPort = settings.devServer.uiPort ?? port + 1000;
  const announce =
    options.announce === false
      ? undefined
      : (options.announce ?? ((line: string) => process.stderr.write(`durable-agents: ${line}\n`)));
  if (port !== 0 && (await isListening(port))) {
    const address = `127.0.0.1:${port}`;
    // Someone else's server: its UI is where it answers as one, else unknown (no guessed link).
    const uiUrl = await temporalUiAt(uiPort);
    const reused = await open(
      { address },
      { namespace: 'default', address, mode: 'embedded-reused', ...(uiUrl ? { uiUrl } : {}) },
    );
    describeTemporal(reused).forEach((line) => announce?.(line));
    return reused;
  }
  if (options.start === false) {
    throw new Error(
      `no Temporal server to talk to: TEMPORAL_ADDRESS is not set and no dev server runs at 127.0.0.1:${port}. ` +
        'Start your worker first (connectTemporal() starts a dev server for it), or set TEMPORAL_ADDRESS to your cluster.',
    );
  }
  const persistent = options.persistent ?? true;
  const dbFilename =
    persistent && port !== 0 ? (settings.devServer.dbFilename ?? join(dataDir(), 'dev.db')) : undefined;
  const server = await startDevServer({ port, uiPort: port !== 0 ? uiPort : undefined, dbFilename }, env);
  try {
    const started = await open(
      { address: server.address },
      { namespace: 'default', address: server.address, mode: 'embedded-started', uiUrl: server.uiUrl, dbFilename },
      server.stop,
    );
    describeTemporal(started).forEach((line) => announce?.(line));
    return started;
  } catch (err) {
    await server.stop();
    throw err;
  }
}

/** Opens the client and worker connections (the client encrypting with `keys`); `afterClose` runs once both are closed. */
async function openConnections(
  connectionOptions: NativeConnectionOptions,
  meta: Pick<TemporalEnv, 'namespace' | 'address' | 'mode' | 'uiUrl' | 'dbFilename'>,
  settings: ClientSettings,
  worker: boolean,
  afterClose?: () => Promise<void>,
): Promise<TemporalEnv> {
  const connecting = connectClient(connectionOptions as ConnectionOptions);
  let clientConnection: Awaited<typeof connecting>;
  let nativeConnection: NativeConnection | undefined;
  try {
    [clientConnection, nativeConnection] = await Promise.all([
      connecting,
      worker ? connectWorker(connectionOptions, settings) : refusedAt(meta.address, connectionOptions),
    ]);
  } catch (err) {
    // The other connection, should it still open, is closed rather than left to keep the process alive.
    connecting.then((c) => c.close()).catch(() => undefined);
    throw err;
  }
  // The live channel to workers in other processes (AGENT_LIVE_URL), held until this is closed.
  const releaseLive = settings.liveUrl
    ? holdRedisLiveChannel({ url: settings.liveUrl, namespace: meta.namespace })
    : undefined;
  return {
    ...meta,
    encrypted: settings.encryptionKeys !== undefined,
    client: new Client({
      connection: clientConnection.connection,
      namespace: meta.namespace,
      // The workers' encryption and payload store: what one side writes, the other reads.
      ...(settings.dataConverter ? { dataConverter: settings.dataConverter } : {}),
      // Traced clients start the trace that the run's workflow and activities continue.
      ...(settings.tracing ? { plugins: [installTracing(settings.tracing)] } : {}),
    }),
    get nativeConnection(): NativeConnection {
      if (!nativeConnection)
        throw new Error('this Temporal connection was opened for clients only (connectTemporal({ worker: false }))');
      return nativeConnection;
    },
    close: async () => {
      await flushTracing().catch(() => undefined);
      await Promise.all([clientConnection.close(), nativeConnection?.close(), releaseLive?.()]);
      await afterClose?.();
    },
  };
}

/**
 * What a long-running process (worker, HTTP API) says about its Temporal connection at start:
 * whether it started the embedded dev server (which stops with it) or reused one already running
 * (which it leaves running), and the Web UI.
 */
export function describeTemporal(env: TemporalEnv): string[] {
  const lines: string[] = [];
  if (env.mode === 'configured') lines.push(`Temporal: ${env.address}, namespace ${env.namespace}`);
  else if (env.mode === 'embedded-started') {
    lines.push(
      `Temporal: started an embedded dev server at ${env.address}, data in ${env.dbFilename ?? 'memory'}; it stops when this process stops.`,
    );
  } else {
    lines.push(
      `Temporal: reusing the dev server already running at ${env.address} (started by another process; it keeps running when this one stops).`,
    );
  }
  if (env.uiUrl) lines.push(`Temporal Web UI: ${env.uiUrl}/namespaces/${env.namespace}/workflows`);
  if (env.encrypted)
    lines.push(
      'Payloads are encrypted (AGENT_ENCRYPTION_KEYS); the Web UI shows them through the codec server (npx durable-agents codec-server).',
    );
  return lines;
}

/** The Rust core reports connection failures as `tonic::transport::Error(...)`; people need the gist. */
function connectProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/ConnectionRefused|Connection refused/i.test(message))
    return 'connection refused (is the server running, and is the port right?)';
  if (/dns error|failed to lookup|Name or service not known/i.test(message)) return 'host not found';
  if (/timed out|deadline/i.test(message)) return 'timed out';
  if (/certificate|tls|ssl/i.test(message)) return `TLS failed (check TEMPORAL_TLS* settings): ${message}`;
  return message;
}

/**
 * The Temporal Web UI's address on a local port, if a Temporal UI answers there (its settings
 * route); undefined otherwise, so a dev server started by someone else on other ports gets no
 * link that leads nowhere.
 */
export async function temporalUiAt(port: number): Promise<string | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/settings`, { signal: AbortSignal.timeout(1000) });
    const settings = (await res.json()) as Record<string, unknown>;
    return res.ok && typeof settings.Version === 'string' && 'Auth' in settings
      ? `http://localhost:${port}`
      : undefined;
  } catch {
    return undefined;
  }
}

/** `configured` (`TEMPORAL_UI_URL`) if set; Temporal Cloud's UI for `*.tmprl.cloud` addresses; otherwise unknown. */
export function uiBaseUrl(address: string, configured: string | undefined): string | undefined {
  if (configured) return configured;
  if (/\.tmprl\.cloud(:\d+)?$/.test(address)) return 'https://cloud.temporal.io';
  return undefined;
}

/** The Web UI page of one workflow. */
export function workflowUrl(uiUrl: string | undefined, namespace: string, workflowId: string): string | undefined {
  return uiUrl
    ? `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`
    : undefined;
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * Fails at once when nothing listens at `address` (refused, or no such host), for a client-only
 * connection: the client's own connect retries for ten seconds before it says "timed out", where
 * the worker connection would have failed in milliseconds, saying why. Anything else (it listens,
 * it is slow to answer, a proxy is configured) leaves the answer to the client's connect.
 */
async function refusedAt(address: string, options: NativeConnectionOptions): Promise<undefined> {
  const at = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address);
  if (!at || options.proxy) return undefined;
  const problem = await new Promise<string | undefined>((resolve) => {
    const socket = createConnection({ host: at[1], port: Number(at[2]) });
    socket.setTimeout(3000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED') resolve('Connection refused');
      else if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') resolve(`failed to lookup ${at[1]}`);
      else resolve(undefined);
    });
  });
  if (problem) throw new Error(problem);
  return undefined;
}

/** The worker connection (the Rust core's), with the worker SDK loaded only now (see `EmbeddedOptions.worker`). */
async function connectWorker(options: NativeConnectionOptions, settings: ClientSettings): Promise<NativeConnection> {
  const [{ NativeConnection }, { installRuntimeLogging }] = await Promise.all([
    import('@temporalio/worker'),
    import('../telemetry/logging'),
  ]);
  // The SDK's logs one line each (unless the program installed its Runtime already): a failed
  // model call is a warning to read, not a 40-line stack trace. Installed only now, as the native
  // connection would create the Runtime anyway: one with nothing to serve keeps the process alive.
  installRuntimeLogging('WARN', settings.logging);
  return NativeConnection.connect(options);
}

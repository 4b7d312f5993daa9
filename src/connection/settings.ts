import type { DataConverter } from '@temporalio/common';
import { encryptingDataConverter, encryptionKeysFromEnv, type EncryptionKey } from '../codec/encryption-codec';
import { blobStoreFromEnv } from '../storage/blob-store-from-env';
import { liveUrlSetting } from '../storage/redis-live-bridge';
import type { BlobStore } from '../storage/blob-store';
import { payloadStorageFromEnv, type PayloadStore } from '../storage/payload-storage';
import { runtimeLoggingFromEnv, type RuntimeLoggingOptions } from '../telemetry/logging-settings';
import { tracingFromEnv, type TracingOptions } from '../telemetry/tracing';
import { defaultFleetTaskQueue, defaultTaskQueue } from './task-queue';

/**
 * What a client reads from its environment, read in one place: `connectTemporal`, the command
 * line, the HTTP API and the MCP server take their settings from here, and nothing below them
 * reads `process.env`. Workers read theirs with `workerSettings` (durable-agents/worker).
 */
export interface ClientSettings {
  /** `TEMPORAL_ADDRESS`: the cluster to connect to; unset, the embedded dev server. */
  address?: string;
  /** `AGENT_TASK_QUEUE`, else `agents`: where the workers poll. */
  taskQueue: string;
  /** `AGENT_FLEET_TASK_QUEUE`, else `durable-agents-fleet`: where the tenants' ledgers run (budgets are set there). */
  fleetTaskQueue: string;
  /** `AGENT_ENCRYPTION_KEYS`: the workers' payload encryption keys, which clients need too. */
  encryptionKeys?: EncryptionKey[];
  /** `AGENT_PAYLOAD_STORE`: where payloads too large for a history go (shared with the workers). */
  payloadStorage?: PayloadStore;
  /**
   * The data converter a client of the agents needs: the workers' encryption and payload store, so
   * what one side writes the other reads (`new Client({ ..., dataConverter })`). Undefined: the default.
   */
  dataConverter?: DataConverter;
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: where a client's traces go, when set. */
  tracing?: TracingOptions;
  /** `AGENT_BLOB_DIR` (else the S3 bucket of `AGENT_PAYLOAD_STORE`, else `~/.durable-agents/blobs`): where images are kept by reference. */
  blobStore: BlobStore;
  /** The live channel to workers in other processes (`AGENT_LIVE_URL`, a Redis URL); none: this process's only. */
  liveUrl?: string;
  /** `AGENT_LOG_LEVEL` and `AGENT_METRICS_PORT`: the SDK's log level and Prometheus endpoint. */
  logging: Pick<RuntimeLoggingOptions, 'level' | 'metrics'>;
  /** The embedded dev server's settings: `AGENT_DEV_SERVER_PORT`, `TEMPORAL_UI_PORT`, `AGENT_DEV_SERVER_DB`. */
  devServer: { port?: number; uiPort?: number; dbFilename?: string };
  /** `TEMPORAL_UI_URL`: the Web UI of a configured cluster. */
  uiUrl?: string;
  /**
   * The environment these were read from, for what reads it in its own way: Temporal's connection
   * settings (`TEMPORAL_NAMESPACE`, TLS, API key, through `@temporalio/envconfig`), the Temporal
   * CLI's lookup (`TEMPORAL_CLI_PATH`, `PATH`), MCP server configurations, the HTTP API's access rules.
   */
  env: NodeJS.ProcessEnv;
}

/**
 * Reads a client's settings from `env` (default: the process's environment). Throws, naming the
 * variable and what it takes, on a value it cannot use, before anything connects.
 */
export function clientSettings(env: NodeJS.ProcessEnv = process.env): ClientSettings {
  const encryptionKeys = encryptionKeysFromEnv(env);
  const payloadStorage = payloadStorageFromEnv(env);
  const devPort = env.AGENT_DEV_SERVER_PORT;
  if (devPort !== undefined && devPort !== '' && !/^\d+$/.test(devPort))
    throw new Error(`AGENT_DEV_SERVER_PORT must be a port number (0-65535), got "${devPort}"`);
  const uiPort = uiPortFromEnv(env);
  const tracing = tracingFromEnv(env);
  return {
    ...(env.TEMPORAL_ADDRESS ? { address: env.TEMPORAL_ADDRESS } : {}),
    taskQueue: defaultTaskQueue(env),
    fleetTaskQueue: defaultFleetTaskQueue(env),
    ...(encryptionKeys ? { encryptionKeys } : {}),
    ...(payloadStorage ? { payloadStorage } : {}),
    ...(encryptionKeys || payloadStorage
      ? {
          dataConverter: {
            ...(encryptionKeys ? encryptingDataConverter(encryptionKeys) : {}),
            ...(payloadStorage ? { externalStorage: payloadStorage.storage } : {}),
          },
        }
      : {}),
    ...(tracing ? { tracing } : {}),
    blobStore: blobStoreFromEnv(env),
    ...liveUrlSetting(undefined, env.AGENT_LIVE_URL),
    logging: runtimeLoggingFromEnv(env),
    devServer: {
      ...(devPort ? { port: Number(devPort) } : {}),
      ...(uiPort !== undefined ? { uiPort } : {}),
      ...(env.AGENT_DEV_SERVER_DB ? { dbFilename: env.AGENT_DEV_SERVER_DB } : {}),
    },
    ...(env.TEMPORAL_UI_URL ? { uiUrl: env.TEMPORAL_UI_URL.replace(/\/+$/, '') } : {}),
    env,
  };
}

/**
 * `TEMPORAL_UI_PORT`: the Web UI port of the embedded dev server (default: its port + 1000, as the
 * Temporal CLI does), and where to look for the UI of a dev server someone else started.
 */
export function uiPortFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const value = env.TEMPORAL_UI_PORT;
  if (value === undefined || value === '') return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 65535)
    throw new Error(`TEMPORAL_UI_PORT must be a port number (1-65535), got "${value}"`);
  return Number(value);
}

/**
 * The process's environment, for a command that reads a few variables of its own and no client
 * settings (`codec-server`, `install-temporal`): a broken TEMPORAL_* is not its business.
 */
export function processEnv(): NodeJS.ProcessEnv {
  return process.env;
}

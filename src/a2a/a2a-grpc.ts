import { A2AError, VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { AgentCard } from '@a2a-js/sdk';
import { defaultServerCallContextBuilder, type A2ARequestHandler, type ServerCallContext } from '@a2a-js/sdk/server';
import { grpcService } from '@a2a-js/sdk/server/grpc';
import type { TenantScope } from '../core/fleet/tenants';
import { TenantUser } from './tenant-user';

/** The gRPC service of A2A's gRPC binding (`lf.a2a.v1.A2AService`), for a `@grpc/grpc-js` server. */
export type A2AGrpcService = ReturnType<typeof grpcService>;

/** What {@link a2aGrpcService} serves. */
export interface A2AGrpcServiceOptions {
  /**
   * The request handler of the agent a call is for: the call's `tenant` names the agent (A2A's
   * tenant routes a request on a server of several agents; the agent's card declares it), an
   * empty one means the server's default agent. `problem` says why there is no such agent
   * (answered NOT_FOUND); a rejection (the agents could not be listed) is UNAVAILABLE.
   */
  handlerFor(tenant: string): Promise<{ handler: A2ARequestHandler } | { problem: string }>;
  /**
   * Whom a call acts for, from the bearer token of its `authorization` metadata (undefined
   * without one): its tenant's scope, every tenant's (`{}`), or undefined when the token is
   * refused (the call is answered UNAUTHENTICATED).
   */
  authorize(token: string | undefined): TenantScope | undefined;
}

/** gRPC status codes (grpc-js's, without importing the transport for three numbers). */
const UNAUTHENTICATED = 16;
const UNIMPLEMENTED = 12;
const NOT_FOUND = 5;
const UNAVAILABLE = 14;
/** The versions the binding speaks (1.0; 0.3's gRPC binding is not served). */
const VERSIONS = ['1.0'];
/** What the SDK checks a call's version against: the binding's versions. */
const VERSIONS_CARD = AgentCard.fromJSON({
  name: 'durable-agents',
  supportedInterfaces: VERSIONS.map((protocolVersion) => ({ url: '', protocolBinding: 'GRPC', protocolVersion })),
});
/** A2A errors whose gRPC status the specification (5.4) gives otherwise than the SDK. */
const SPEC_STATUS: Record<string, number> = {
  VersionNotSupportedError: UNIMPLEMENTED,
  UnsupportedOperationError: UNIMPLEMENTED,
  PushNotificationNotSupportedError: UNIMPLEMENTED,
};

/**
 * A2A's gRPC binding over the same request handlers as JSON-RPC and HTTP+JSON: the official
 * SDK's `grpcService`, with what the server adds around it. Each call is authorized from its
 * metadata as an HTTP request is from its headers (a tenant's token reaches its tenant's tasks
 * only), routed by its `tenant` to an agent, and answered with the status codes the
 * specification gives (5.4): an unsupported version, operation or push notifications are
 * UNIMPLEMENTED, where the SDK says FAILED_PRECONDITION.
 */
export function a2aGrpcService(o: A2AGrpcServiceOptions): A2AGrpcService {
  const forAgent = async (context: ServerCallContext) => {
    let found: Awaited<ReturnType<typeof o.handlerFor>>;
    try {
      found = await o.handlerFor(context.tenant ?? '');
    } catch (err) {
      throw grpcError(new A2AError(`the agents cannot be listed now: ${(err as Error).message}`), UNAVAILABLE);
    }
    if ('problem' in found) throw grpcError(new A2AError(found.problem), NOT_FOUND);
    return found.handler;
  };
  const handler: A2ARequestHandler = {
    // Asked by the SDK before each call, for the versions the binding speaks (checked before it
    // asks, in userBuilder, with the specification's status); each agent's own card is its handler's.
    getAgentCard: async () => VERSIONS_CARD,
    getAuthenticatedExtendedAgentCard: async (p, c) => (await forAgent(c)).getAuthenticatedExtendedAgentCard(p, c),
    sendMessage: async (p, c) => (await forAgent(c)).sendMessage(p, c),
    sendMessageStream: async function* (p, c) {
      yield* (await forAgent(c)).sendMessageStream(p, c);
    },
    getTask: async (p, c) => (await forAgent(c)).getTask(p, c),
    cancelTask: async (p, c) => (await forAgent(c)).cancelTask(p, c),
    createTaskPushNotificationConfig: async (p, c) => (await forAgent(c)).createTaskPushNotificationConfig(p, c),
    getTaskPushNotificationConfig: async (p, c) => (await forAgent(c)).getTaskPushNotificationConfig(p, c),
    listTaskPushNotificationConfigs: async (p, c) => (await forAgent(c)).listTaskPushNotificationConfigs(p, c),
    deleteTaskPushNotificationConfig: async (p, c) => (await forAgent(c)).deleteTaskPushNotificationConfig(p, c),
    resubscribe: async function* (p, c) {
      yield* (await forAgent(c)).resubscribe(p, c);
    },
    listTasks: async (p, c) => (await forAgent(c)).listTasks(p, c),
  };
  const service = grpcService({
    requestHandler: withSpecStatus(handler),
    // A call without `a2a-version` to the 1.0 service (0.3's has another name) speaks 1.0.
    contextBuilder: (args) =>
      defaultServerCallContextBuilder({ ...args, requestedVersion: args.requestedVersion ?? VERSIONS[0] }),
    userBuilder: async (call) => {
      const auth = call.metadata.get('authorization')[0]?.toString();
      const token = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1] : undefined;
      const scope = o.authorize(token);
      if (!scope)
        throw grpcError(
          new A2AError(
            token === undefined
              ? 'this server needs a bearer token: send metadata "authorization: Bearer <token>"'
              : "the bearer token is not one of the server's tokens",
          ),
          UNAUTHENTICATED,
        );
      const version = call.metadata.get('a2a-version')[0]?.toString();
      if (version !== undefined && !VERSIONS.includes(version))
        throw grpcError(
          new VersionNotSupportedError(`A2A-Version ${version} is not served over gRPC: use 1.0`),
          UNIMPLEMENTED,
        );
      return new TenantUser(scope);
    },
  });
  return service;
}

/** The error as the SDK's gRPC adapter answers it: with this status. */
function grpcError(error: A2AError, status: number): A2AError {
  return Object.assign(error, { transport: 'grpc', status });
}

/** The handler, whose A2A errors carry the status the specification gives them over gRPC. */
function withSpecStatus(handler: A2ARequestHandler): A2ARequestHandler {
  const mapped = (err: unknown) => {
    const status = err instanceof A2AError ? SPEC_STATUS[err.name] : undefined;
    return status === undefined || (err as { transport?: string }).transport === 'grpc'
      ? err
      : grpcError(err as A2AError, status);
  };
  const wrapped = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(handler) as [string, (...args: unknown[]) => unknown][])
    wrapped[name] =
      name === 'sendMessageStream' || name === 'resubscribe'
        ? async function* (...args: unknown[]) {
            try {
              yield* fn(...args) as AsyncGenerator;
            } catch (err) {
              throw mapped(err);
            }
          }
        : async (...args: unknown[]) => {
            try {
              return await fn(...args);
            } catch (err) {
              throw mapped(err);
            }
          };
  return wrapped as unknown as A2ARequestHandler;
}

/** A listening gRPC server of the A2A binding. */
export interface A2AGrpcListener {
  /** The port it listens on (the one asked for, or the one given for 0). */
  port: number;
  /** Stops taking calls, and ends those under way after a grace period of 5 s. */
  close(): Promise<void>;
}

/**
 * Serves `service` on `host:port` without TLS (put a TLS-terminating proxy in front of it off
 * loopback, as for the HTTP API). Rejects with the fix when the port is taken.
 */
export async function listenA2aGrpc(service: A2AGrpcService, host: string, port: number): Promise<A2AGrpcListener> {
  const grpc = await import('@grpc/grpc-js');
  const { A2AService } = await import('@a2a-js/sdk/server/grpc');
  const server = new grpc.Server();
  server.addService(A2AService, service);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${host.includes(':') ? `[${host}]` : host}:${port}`,
      grpc.ServerCredentials.createInsecure(),
      (err, p) =>
        err
          ? reject(new Error(`cannot serve A2A over gRPC on ${host}:${port} (AGENT_A2A_GRPC_PORT): ${err.message}`))
          : resolve(p),
    ),
  );
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), 5000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

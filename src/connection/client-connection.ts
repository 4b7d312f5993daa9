import { Metadata, status, type InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import {
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type ConnectionOptions,
} from '@temporalio/client';

/** A client connection whose close() is safe while calls are still retrying. */
export interface ClientConnection {
  connection: Connection;
  close(): Promise<void>;
}

/**
 * `Connection.connect` with two fixes. It reconnects to a server that comes back within seconds
 * (see RECONNECT_PROMPTLY). And the SDK's gRPC retry interceptor schedules each retry on a
 * timer that `Connection.close()` does not clear; when it fires after the close, grpc-js throws
 * "Channel has been shut down" inside the timer, an uncaught exception that kills the process
 * (seen when Ctrl+C or a finished command closed the connection while a poll was retrying). A
 * guard below the retry interceptor answers every attempt made after close() with CANCELLED,
 * which is never retried, so the retry ends as a rejected call instead.
 */
export async function connectClient(options: ConnectionOptions): Promise<ClientConnection> {
  let closed = false;
  const guard: Interceptor = (callOptions, nextCall) =>
    closed ? closedCall() : (nextCall(callOptions) as InterceptingCall);
  // Interceptors run outermost first: the retry interceptor's new attempts pass through the guard.
  const interceptors = [...(options.interceptors ?? [makeGrpcRetryInterceptor(defaultGrpcRetryOptions())]), guard];
  const connection = await Connection.connect({
    ...options,
    interceptors,
    channelArgs: { ...RECONNECT_PROMPTLY, ...options.channelArgs },
  });
  return {
    connection,
    close: async () => {
      closed = true;
      await connection.close();
    },
  };
}

/**
 * How soon the channel tries again to reach a server it lost. grpc-js backs off up to 2 minutes
 * between attempts by default, so a client waiting out a long Temporal outage went on saying
 * "still unreachable" for a minute or more after the server was back. A reconnect attempt is one
 * TCP connection: trying every few seconds costs nothing worth saving.
 */
const RECONNECT_PROMPTLY = {
  'grpc.initial_reconnect_backoff_ms': 1_000,
  'grpc.max_reconnect_backoff_ms': 3_000,
};

/**
 * A call that ends at once with CANCELLED, without touching the (closed) channel. Like a unary call
 * of grpc-js that failed, it reports "no message" before its status: the SDK's retry interceptor
 * passes the last message on when it gives up, and had none to pass (a TypeError that killed the
 * process, for a call made after close()).
 */
function closedCall(): InterceptingCall {
  const call = {
    start(
      _metadata: Metadata,
      listener?: {
        onReceiveMessage?: (m: unknown) => void;
        onReceiveStatus?: (s: { code: number; details: string; metadata: Metadata }) => void;
      },
    ) {
      setImmediate(() => {
        listener?.onReceiveMessage?.(undefined);
        listener?.onReceiveStatus?.({
          code: status.CANCELLED,
          details: 'the Temporal connection is closed',
          metadata: new Metadata(),
        });
      });
    },
    cancelWithStatus: () => undefined,
    getPeer: () => '',
    sendMessageWithContext: () => undefined,
    sendMessage: () => undefined,
    startRead: () => undefined,
    halfClose: () => undefined,
    getAuthContext: () => null,
  };
  return call as unknown as InterceptingCall;
}

/**
 * `durable-agents/a2a`: the task queue's named agents as A2A agents (protocol 1.0, with the
 * official `@a2a-js/sdk`), to mount in a server of your own: {@link a2aHandler} answers
 * `/a2a/<agent>/...` (Agent Cards, JSON-RPC, HTTP+JSON). Its parts, for an A2A server built on the
 * SDK directly: the executor that runs a task as a turn of a durable conversation, and the task and
 * push-notification stores on Temporal. Remote A2A agents as tools are `a2aAgent` in
 * `durable-agents/worker`. docs/a2a.md describes both directions.
 */
export { a2aHandler, type A2AHandler, type A2AOptions } from './a2a-server';
export {
  a2aGrpcService,
  listenA2aGrpc,
  type A2AGrpcService,
  type A2AGrpcServiceOptions,
  type A2AGrpcListener,
} from './a2a-grpc';
export type {
  A2AServerExtension,
  A2AMessageOutcome,
  A2AMessageJson,
  A2AMessageContext,
  A2APartInput,
  A2AArtifactInput,
} from './a2a-server-extension';
export { ConversationExecutor, type ConversationExecutorOptions } from './conversation-executor';
export { TemporalTaskStore } from './task-store';
export { TemporalPushStore } from './push-store';
export { agentCard, type AgentCardOptions } from './agent-card';

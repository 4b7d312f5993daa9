/**
 * `durable-agents/http`: the HTTP API (runs, conversations, approvals, live events, the web chat
 * page) as a Node `http` server or a request handler to mount in your own, and its access rules
 * (bearer tokens, CORS, a rate limit). docs/http-api.md describes the routes.
 */
export {
  createHttpApi,
  httpApiHandler,
  MAX_BODY_BYTES,
  MAX_MESSAGE_BODY_BYTES,
  MAX_WAIT_MS,
  type HttpApiOptions,
} from './http-api';
export { httpAccessFromEnv, FAILED_AUTH_PER_MINUTE, MIN_TOKEN_LENGTH, type HttpAccessOptions } from './access';
export { httpServerSettingsFromEnv, type A2AServerSettings, type HttpServerSettings } from './server-settings';
export { signBody, signatureProblem, SIGNATURE_HEADER } from './webhook-signature';
export { outcomeJson } from '../client/outcome-json';
export { createCodecServer, MAX_CODEC_PAYLOADS, type CodecServerOptions } from './codec-server';

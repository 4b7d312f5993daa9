/**
 * `durable-agents/testing`: what your own tests need to run agents without a real model: an
 * OpenAI-compatible server on loopback that answers from a script (or a function of the request)
 * and records the requests it got, so tests can assert on prompts and the tools offered.
 *
 * @experimental More of a test kit (a test environment with a dev server and worker) is coming;
 * names may change until then.
 */
export {
  startOpenAICompatibleServer,
  type ChatAnswer,
  type ChatHandler,
  type ChatRequest,
  type OpenAICompatibleServer,
} from './testing/openai-compatible-server';

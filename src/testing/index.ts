/**
 * `durable-agents/testing`: what your own tests need to test agents without a real model or a
 * Temporal server of your own, with any test runner (`node:test`, jest, vitest):
 * `createTestEnvironment` starts a dev server and a worker with your agents, and `scriptedModel`
 * answers model calls from a script, in every provider's wire format, recording the requests.
 * `startOpenAICompatibleServer` is the scripted server on its own.
 */
export {
  scriptedModel,
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedStep,
  type ScriptedAnswer,
  type ScriptedUsage,
  type ScriptedStepExtras,
  type ScriptedProvider,
} from './scripted-model';
export { createTestEnvironment, type TestEnvironment, type TestEnvironmentOptions } from './test-environment';
export { demoModel } from './demo-model';
export {
  startOpenAICompatibleServer,
  type ChatAnswer,
  type ChatHandler,
  type ChatRequest,
  type OpenAICompatibleServer,
} from './openai-compatible-server';

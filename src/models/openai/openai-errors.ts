import * as OpenAISdk from 'openai';
import type { ProviderErrors } from '../model-error';

/** The `openai` SDK's errors (Chat Completions and the Responses API), and what a user fixes when they happen. */
export const OPENAI_ERRORS: ProviderErrors = {
  APIError: OpenAISdk.APIError,
  APIConnectionError: OpenAISdk.APIConnectionError,
  APIConnectionTimeoutError: OpenAISdk.APIConnectionTimeoutError,
  APIUserAbortError: OpenAISdk.APIUserAbortError,
  keyVar: 'OPENAI_API_KEY',
  baseURLVar: 'OPENAI_BASE_URL',
  notFound: (e) =>
    `has no model "${e.model}" or no such endpoint; check AGENT_MODEL (or the agent's model), and that OPENAI_BASE_URL ends in /v1`,
};

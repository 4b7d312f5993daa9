import type { ModelConfig } from '../models/model-config';
import type { ChatAnswer, ChatRequest } from './chat-request';
import { startOpenAICompatibleServer, type OpenAICompatibleServer } from './openai-compatible-server';

/** Token counts a scripted step reports (else they are estimated from the text, 4 characters a token). */
export interface ScriptedUsage {
  promptTokens?: number;
  completionTokens?: number;
  cachedPromptTokens?: number;
  reasoningTokens?: number;
}

/** What a scripted step may add to an answer: the usage it reports, and how long it takes. */
export interface ScriptedStepExtras {
  usage?: ScriptedUsage;
  /** Wait this long before answering (a slow model: timeouts, cancellation, streaming). */
  delayMs?: number;
}

/**
 * One scripted model call: a final answer (`{ content }`), tool calls
 * (`{ toolCalls: [{ name, arguments }] }`), or a function of the request that returns either
 * (to answer from the tool results it was sent).
 */
export type ScriptedStep = ScriptedAnswer | ((request: ChatRequest) => ScriptedAnswer | Promise<ScriptedAnswer>);

/**
 * A step's answer: text, tool calls (with optional `usage` and `delayMs`), or a raw HTTP failure
 * (`{ http: { status, body? } }`) to test retries and failure classification.
 */
export type ScriptedAnswer =
  | ({ content: string } & ScriptedStepExtras)
  | ({ toolCalls: { name: string; arguments?: unknown; id?: string }[]; content?: string } & ScriptedStepExtras)
  | ChatAnswer;

/** The provider whose wire format the worker speaks to the scripted model (its adapter is tested too). */
export type ScriptedProvider = 'openai' | 'openai-responses' | 'anthropic';

/** Options of {@link scriptedModel}. */
export interface ScriptedModelOptions {
  /** The adapter the worker uses: `openai` (Chat Completions, default), `openai-responses` or `anthropic`. */
  provider?: ScriptedProvider;
  /** The model's name, as runs and usage report it (default `scripted`). */
  name?: string;
  /** Answers calls past the end of the script (default: a failure that says the script ran out). */
  fallback?: ScriptedStep;
  /** The loopback port to listen on (default: any free port), e.g. one a firewall rule or a proxy expects. */
  port?: number;
}

/**
 * A model for tests: a server on loopback that speaks the providers' wire formats (so the real
 * provider SDKs and adapters run) and answers from a script. Pass it to `createTestEnvironment`,
 * which starts and stops it. `requests` records every request it got, in the Chat Completions
 * shape whatever the provider, so tests can assert on prompts and the tools offered.
 */
export interface ScriptedModel {
  /** Every request received, in order (`messages`, `tools`, ...). */
  readonly requests: ChatRequest[];
  /** The worker's model settings for it; valid once {@link start} resolved. */
  config(): ModelConfig;
  /** Starts the server (idempotent); `createTestEnvironment` calls it. */
  start(): Promise<void>;
  /** Stops the server. */
  close(): Promise<void>;
}

/**
 * A scripted model. A list of steps is answered in order, one step per model call, chosen by the
 * number of assistant messages in the request, so a retried call gets the same step again; a
 * function answers every call from the request itself.
 *
 * ```ts
 * const model = scriptedModel([
 *   { toolCalls: [{ name: 'lookup_order', arguments: { id: 'A-1' } }] },
 *   (request) => ({ content: `Order status: ${request.messages.at(-1)?.content}` }),
 * ]);
 * ```
 */
export function scriptedModel(
  steps: readonly ScriptedStep[] | ((request: ChatRequest) => ScriptedAnswer | Promise<ScriptedAnswer>),
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const requests: ChatRequest[] = [];
  let server: OpenAICompatibleServer | undefined;
  let starting: Promise<void> | undefined;
  const name = options.name ?? 'scripted';
  const provider = options.provider ?? 'openai';
  const answerFor = async (request: ChatRequest): Promise<ChatAnswer> => {
    requests.push(request);
    let step: ScriptedStep | undefined;
    if (typeof steps === 'function') step = steps;
    else {
      const index = request.messages.filter((m) => m.role === 'assistant').length;
      step = steps[index] ?? options.fallback;
      if (!step)
        return {
          http: {
            status: 400,
            body: {
              error: {
                message: `the scripted model has ${steps.length} step${steps.length === 1 ? '' : 's'} and was asked for step ${index + 1}: add a step, or a fallback`,
                type: 'invalid_request_error',
              },
            },
          },
        };
    }
    const answer = (typeof step === 'function' ? await step(request) : step) as ScriptedAnswer & ScriptedStepExtras;
    if ('http' in answer) return answer;
    const { delayMs, ...rest } = answer;
    if (delayMs && delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    // A tool call without arguments is a call with none: `{}`.
    if ('toolCalls' in rest && rest.toolCalls)
      return { ...rest, toolCalls: rest.toolCalls.map((c) => ({ ...c, arguments: c.arguments ?? {} })) } as ChatAnswer;
    return rest as ChatAnswer;
  };
  return {
    requests,
    config() {
      if (!server)
        throw new Error('the scripted model has not started: createTestEnvironment starts it (or call start())');
      const base = server.baseURL;
      return {
        baseURL: base,
        apiKey: 'scripted',
        model: provider === 'openai' ? name : `${provider}:${name}`,
        requestTimeoutMs: 30_000,
        configured: true,
        ...(provider === 'anthropic' ? { anthropic: { apiKey: 'scripted', baseURL: base.replace(/\/v1$/, '') } } : {}),
      };
    },
    start() {
      starting ??= startOpenAICompatibleServer(answerFor, {
        model: name,
        ...(options.port !== undefined ? { port: options.port } : {}),
      }).then((s) => {
        server = s;
      });
      return starting;
    },
    async close() {
      await server?.close();
      server = undefined;
      starting = undefined;
    },
  };
}

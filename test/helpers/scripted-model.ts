import {
  startOpenAICompatibleServer,
  type ChatAnswer,
  type ChatRequest,
  type OpenAICompatibleServer,
} from '../../src/testing/openai-compatible-server';

/** One scripted LLM turn: a fixed answer, or one computed from the request (e.g. from tool results). */
export type Step = ChatAnswer | ((request: ChatRequest) => ChatAnswer | Promise<ChatAnswer>);

export interface ScriptedModel extends OpenAICompatibleServer {
  /** Requests per step index, to check retries. */
  attempts: number[];
}

/**
 * A scripted OpenAI-compatible server for tests. The step answered is chosen by the number of
 * assistant messages already in the request, so retries of the same model call get the same
 * step. `failFirst[i]` lists HTTP failures served before step `i` succeeds (429-then-success).
 */
const open = new Set<OpenAICompatibleServer>();

/** Closes every scripted model still open; `useTestTemporal` runs it after each test. */
export async function closeScriptedModels(): Promise<void> {
  await Promise.all([...open].map((m) => m.close()));
  open.clear();
}

/**
 * A model answering from the whole request (conversations: which step a request belongs to is
 * not the number of assistant messages once a memory window trims them).
 */
export async function startModel(
  handler: (request: ChatRequest) => ChatAnswer | Promise<ChatAnswer>,
): Promise<OpenAICompatibleServer> {
  const server = await startOpenAICompatibleServer(handler);
  open.add(server);
  return server;
}

/** The content of the last message in the request with `role`. */
export function lastOf(request: ChatRequest, role: string): string {
  return String([...request.messages].reverse().find((m) => m.role === role)?.content ?? '');
}

export async function startScriptedModel(
  steps: Step[],
  options: { failFirst?: Record<number, ChatAnswer[]>; fallback?: Step } = {},
): Promise<ScriptedModel> {
  const attempts: number[] = [];
  const server = await startOpenAICompatibleServer((request) => {
    const index = request.messages.filter((m) => m.role === 'assistant').length;
    attempts[index] = (attempts[index] ?? 0) + 1;
    const failure = options.failFirst?.[index]?.[attempts[index] - 1];
    if (failure) return failure;
    const step = steps[index] ?? options.fallback ?? { content: `(script has no step ${index})` };
    return typeof step === 'function' ? step(request) : step;
  });
  open.add(server);
  return Object.assign(server, { attempts });
}

/** Tool results (`tool`, or legacy `function`, message contents) in the request, in order. */
export function toolResults(request: ChatRequest): string[] {
  return request.messages.filter((m) => m.role === 'tool' || m.role === 'function').map((m) => String(m.content));
}

/** An answer calling tools. */
export function call(
  ...calls: Array<[name: string, args: unknown] | [name: string, args: unknown, id: string]>
): ChatAnswer {
  return { toolCalls: calls.map(([name, args, id]) => ({ name, arguments: args, ...(id ? { id } : {}) })) };
}

/** A final text answer. */
export function answer(content: string): ChatAnswer {
  return { content };
}

import { DELEGATED_BY_KEY } from '../../core/policies/policies';
import { defineJsonSchemaTool, type JsonSchemaToolDefinition, type ToolContext } from '../define-tool';
import { ToolError } from '../tool-error';

/** Options of {@link a2aAgent}. */
export interface A2AAgentOptions {
  /** The remote agent's base URL: its card is at `<url>/.well-known/agent-card.json`. */
  url: string;
  /** The tool's name (default: from the URL's last path segment, e.g. `research`). */
  name?: string;
  /** What the LLM reads about it (default: the agent card's description, read on first use... so give one). */
  description?: string;
  /** Headers every request carries (an `authorization` bearer token, say). */
  headers?: Record<string, string>;
  /** How long a remote task may take, all of it (default `"24h"`). */
  timeout?: string | number;
  /** How often the remote task is asked how it goes, at most (ms; default 10 s, starting at 250 ms). */
  maxPollMs?: number;
  /**
   * Who answers when the remote agent needs input (`input-required`): `'person'` (default) asks
   * a person in our run, as an approval with the remote agent's question (approve with the
   * answer as the reason, or reject), and sends the answer to the remote task; `'model'` returns
   * the question to the LLM, which answers by calling the tool again with the task id.
   */
  inputRequired?: 'person' | 'model';
}

/** What a call saves to pick up after a crash: the remote task it follows, and whether the person's answer went out. */
interface Progress {
  taskId: string;
  answered?: true;
  /** The status (its timestamp) the person answered: until the remote task moves on, it is not asked again. */
  asked?: string;
}

/**
 * A remote A2A agent as a tool: a call sends the LLM's message to the agent (protocol 1.0, with
 * the official `@a2a-js/sdk` client) and follows the task it starts until it ends, and the answer
 * (its artifacts) is the tool's result. The call is a durable activity: it may last hours
 * (heartbeating), and an attempt after a crash of its worker follows the same remote task (saved
 * with `checkpoint`) instead of sending the message again. A task that needs input from us
 * (`input-required`) asks a person in our run (`ToolContext.askPerson`: an approval with the remote
 * agent's question, for as long as it takes), and their answer goes to the remote task; with
 * `inputRequired: 'model'` the question goes back to the LLM instead, with the task id to answer.
 */
export function a2aAgent(options: A2AAgentOptions): JsonSchemaToolDefinition<string> {
  const base = options.url.replace(/\/+$/, '');
  const name = options.name ?? toolName(base);
  let client: Promise<A2AClient> | undefined;
  const connect = () => {
    // A failed connection is tried again on the next call (the remote agent may come up later).
    client ??= remoteClient(base, options.headers ?? {}).catch((err: unknown) => {
      client = undefined;
      throw err;
    });
    return client;
  };
  return defineJsonSchemaTool({
    name,
    description: options.description ?? `Asks the remote agent at ${base} (A2A) and returns its answer.`,
    timeout: options.timeout ?? '24h',
    retry: { maximumAttempts: 5 },
    parameters: {
      type: 'object',
      properties: {
        message: { type: 'string', description: 'What to ask or tell the remote agent' },
        taskId: {
          type: 'string',
          description: 'Answering the remote agent when it asked for input: the taskId it gave',
        },
      },
      required: ['message'],
    },
    execute: async (args, ctx) =>
      follow(await connect(), ctx, String(args.message), args.taskId as string | undefined, {
        maxPollMs: options.maxPollMs ?? 10_000,
        askPerson: (options.inputRequired ?? 'person') === 'person',
        name,
      }),
  });
}

type A2AClient = Awaited<ReturnType<typeof remoteClient>>;

async function remoteClient(base: string, headers: Record<string, string>) {
  // Loaded on first use: a worker without remote agents never loads the A2A SDK.
  const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } =
    await import('@a2a-js/sdk/client');
  const sdk = await import('@a2a-js/sdk');
  const withHeaders: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), ...headers } });
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory({ fetchImpl: withHeaders }),
        new RestTransportFactory({ fetchImpl: withHeaders }),
      ],
    }),
  );
  return { client: await factory.createFromUrl(`${base}/`), sdk };
}

async function follow(
  remote: A2AClient,
  ctx: ToolContext,
  message: string,
  answering: string | undefined,
  o: { maxPollMs: number; askPerson: boolean; name: string },
): Promise<string> {
  const { client, sdk } = remote;
  const { TaskState } = sdk;
  const send = (text: string, taskId?: string) =>
    client.sendMessage({
      tenant: '',
      message: sdk.Message.fromJSON({
        // Stable across attempts: a server that has it already may tell the send apart.
        messageId: ctx.idempotencyKey,
        role: 'ROLE_USER',
        parts: [{ text }],
        ...(taskId ? { taskId } : {}),
        // Under policies: whom this call works for, so the agent there runs under their policies too.
        ...(ctx.delegatedBy?.length ? { metadata: { [DELEGATED_BY_KEY]: ctx.delegatedBy } } : {}),
      }),
      configuration: {
        acceptedOutputModes: ['text/plain', 'application/json'],
        returnImmediately: true,
        taskPushNotificationConfig: undefined,
      },
      metadata: undefined,
    });
  let progress = ctx.resumeFrom as Progress | undefined;
  if (!progress) {
    const sent = await send(message, answering);
    // A plain message back: the agent answered without a task.
    if (!('status' in sent)) return textOf(sent.parts);
    progress = { taskId: sent.id };
    ctx.checkpoint(progress);
  } else if (ctx.answer && !progress.answered) {
    // A person answered the remote agent's question (see askPerson below): it goes to its task once.
    const { approved, text } = ctx.answer;
    await send(approved ? text || 'yes' : `no${text ? `, ${text}` : ''}`, progress.taskId);
    progress = { ...progress, answered: true };
    ctx.checkpoint(progress);
  }
  for (let wait = 250; ; wait = Math.min(wait * 2, o.maxPollMs)) {
    const task = await client.getTask({ tenant: '', id: progress.taskId, historyLength: undefined });
    const state = task.status?.state;
    const said = task.status?.message ? textOf(task.status.message.parts) : '';
    if (state === TaskState.TASK_STATE_COMPLETED)
      return (
        task.artifacts.map((a) => textOf(a.parts)).join('\n') ||
        said ||
        '(the remote agent completed without an answer)'
      );
    if (state === TaskState.TASK_STATE_INPUT_REQUIRED && o.askPerson) {
      const asked = task.status?.timestamp ?? '';
      // The question just answered, still shown until the remote agent takes the answer: wait.
      if (progress.answered && progress.asked === asked) {
        await sleep(wait, ctx.signal);
        continue;
      }
      ctx.askPerson(`${o.name} asks: ${said || 'more information'}`, { taskId: task.id, asked });
    }
    if (state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED)
      return `The remote agent needs input (taskId ${task.id}): ${said || 'it asks for more information'}. To answer, call this tool again with that taskId and your answer as the message.`;
    if (
      state === TaskState.TASK_STATE_FAILED ||
      state === TaskState.TASK_STATE_REJECTED ||
      state === TaskState.TASK_STATE_CANCELED
    )
      throw new ToolError(
        `the remote agent's task ${task.id} ended ${TaskState[state ?? 0].replace('TASK_STATE_', '').toLowerCase()}${said ? `: ${said}` : ''}`,
      );
    await sleep(wait, ctx.signal);
  }
}

/** The text of A2A parts: text as it is, data as JSON. */
function textOf(parts: ReadonlyArray<{ content?: { $case: string; value: unknown } }>): string {
  return parts
    .map((p) =>
      p.content?.$case === 'text'
        ? String(p.content.value)
        : p.content?.$case === 'data'
          ? JSON.stringify(p.content.value)
          : '',
    )
    .filter(Boolean)
    .join('\n');
}

/** A tool name from the URL's last path segment (`https://host/a2a/research` → `research`). */
function toolName(base: string): string {
  const last = new URL(base).pathname.split('/').filter(Boolean).pop() ?? new URL(base).hostname;
  return last.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'remote_agent';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', abort, { once: true });
    function done() {
      signal.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal.reason ?? new Error('cancelled'));
    }
  });
}

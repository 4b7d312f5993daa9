import { randomUUID } from 'node:crypto';
import { parseToolArguments } from '../core/messages/tool-arguments';
import { toolErrorText, toolResultText, type ToolOutcome } from '../core/messages/tool-results';
import type { ToolCall, ImageRef } from '../core/messages/chat-message';
import type { ToolContext } from './define-tool';
import { blobRef, type BlobStore } from '../storage/blob-store';
import { ImageInputError, imageUrl, storeImages } from '../storage/images';
import type { ToolRegistry } from './registry';
import { isToolOutput, type ToolImage } from './tool-output';

/**
 * A tool call's arguments made ready to run: parsed, checked against the tool's schema. Mistakes
 * the LLM can fix (an unknown tool, bad JSON, a schema violation) come back as the outcome to send
 * to the LLM, never as exceptions.
 */
export function prepareToolCall(
  registry: ToolRegistry,
  name: string,
  rawArguments: string,
): { ok: true; args: Record<string, unknown> } | { ok: false; outcome: ToolOutcome } {
  if (!registry.has(name))
    return failed(`there is no tool named "${name}" on this worker. Available tools: ${registry.names().join(', ')}.`);
  const parsed = parseToolArguments(rawArguments);
  if (!parsed.ok) return failed(`${name}: ${parsed.error}`);
  const checked = registry.checkArguments(name, parsed.value);
  if (!checked.ok) return failed(`invalid arguments for ${name}: ${checked.problems.join('; ')}`);
  return { ok: true, args: checked.value };
}

/**
 * A tool's return value as the LLM sees it (`result`) and as JSON for the run result (`value`).
 * A {@link toolOutput} with images has them stored in `blobs` and referenced (`images`); without
 * a store (outside a workflow, where no history keeps them) they are inlined as `data:` URLs. An
 * image that cannot be sent (an SVG, say) is left out with a note in the text the LLM reads.
 */
export async function toolOutcomeOf(value: unknown, blobs?: BlobStore): Promise<ToolOutcome> {
  if (!isToolOutput(value)) return toolOutcome(value);
  const outcome = toolOutcome(value.text ?? value.value);
  if (value.text !== undefined && value.value !== undefined) {
    const json = toJsonValue(value.value);
    if (json !== undefined) outcome.value = json;
  }
  const images: ImageRef[] = [];
  const notes: string[] = [];
  for (const image of value.images) {
    try {
      const [ref] = (await storeImages([imageInput(image)], blobs ?? INLINE)) ?? [];
      if (blobs || !ref.blob) images.push(ref);
      else {
        const { blob: _blob, ...inlined } = ref;
        images.push({ ...inlined, url: await imageUrl(ref, INLINE) });
      }
    } catch (err) {
      if (!(err instanceof ImageInputError)) throw err;
      notes.push(`[an image was left out: ${err.message.replace(/^image 1:? ?/, '')}]`);
    }
  }
  if (notes.length) {
    outcome.result = [outcome.result, ...notes].join('\n');
    delete outcome.json; // the text is no longer the value's JSON
  }
  if (images.length) outcome.images = images;
  return outcome;
}

/** Holds blobs for the moment it takes to inline them (no store: nothing outlives the call). */
const INLINE: BlobStore = (() => {
  const held = new Map<string, Uint8Array>();
  return {
    location: 'memory',
    async put(bytes) {
      const ref = blobRef(bytes);
      held.set(ref, bytes);
      return ref;
    },
    async get(ref) {
      const bytes = held.get(ref);
      held.delete(ref);
      if (!bytes) throw new Error(`blob ${ref} was not held`);
      return bytes;
    },
  };
})();

function imageInput(image: ToolImage) {
  if ('url' in image) return image.url;
  const data = typeof image.data === 'string' ? Buffer.from(image.data, 'base64') : image.data;
  return { data, mediaType: image.mediaType, name: image.name };
}

/** A tool's return value as the LLM sees it (`result`) and as JSON for the run result (`value`). */
export function toolOutcome(value: unknown): ToolOutcome {
  const outcome: ToolOutcome = { result: toolResultText(value), error: false };
  // A string is its own text: storing it again as `value` would double its history footprint.
  const json = typeof value === 'string' ? undefined : toJsonValue(value);
  if (json !== undefined) {
    outcome.value = json;
    outcome.json = true;
  }
  return outcome;
}

function failed(message: string): { ok: false; outcome: ToolOutcome } {
  return { ok: false, outcome: { result: toolErrorText(message), error: true } };
}

/** The value as plain JSON (what survives the trip through Temporal), or undefined. */
function toJsonValue(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    const json = JSON.stringify(value);
    return json === undefined ? undefined : JSON.parse(json);
  } catch {
    return undefined;
  }
}

/**
 * Runs one tool call from a model reply against a registry and returns what the LLM should read
 * next. Everything the LLM can fix, and a tool that throws, comes back as an error outcome
 * (`error: true`, `result` starting with `Error:`), never as an exception. No retries.
 */
export async function executeToolCall(
  registry: ToolRegistry,
  call: ToolCall,
  context: Partial<ToolContext> = {},
): Promise<ToolOutcome> {
  const prepared = prepareToolCall(registry, call.function.name, call.function.arguments);
  if (!prepared.ok) return prepared.outcome;
  const id = context.workflowId ?? `local-${randomUUID()}`;
  const ctx: ToolContext = {
    conversationId: context.conversationId ?? id,
    workflowId: id,
    runId: context.runId ?? '',
    toolCallId: call.id,
    idempotencyKey: context.idempotencyKey ?? `${id}/${call.id}`,
    attempt: context.attempt ?? 1,
    signal: context.signal ?? new AbortController().signal,
    ...(context.resumeFrom !== undefined ? { resumeFrom: context.resumeFrom } : {}),
    checkpoint: context.checkpoint ?? (() => undefined),
    askPerson: (question) => {
      throw new Error(`it asked a person "${question}", which only a durable run can do`);
    },
    reportProgress: () => undefined,
    askModel: () => {
      throw new Error('it asked the model, which only a durable run can do');
    },
    // Outside a worker there is no credential store: the context given may bring its own.
    credential: context.credential ?? (async () => undefined),
    ...(context.tenant !== undefined ? { tenant: context.tenant } : {}),
  };
  try {
    return await toolOutcomeOf(await registry.execute(call.function.name, prepared.args, ctx));
  } catch (err) {
    return {
      result: toolErrorText(`${call.function.name} failed: ${err instanceof Error ? err.message : String(err)}`),
      error: true,
    };
  }
}

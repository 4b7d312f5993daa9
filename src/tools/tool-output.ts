/**
 * A tool result with images: what a tool returns when the model should see a picture (a chart it
 * drew, a screenshot, a scanned page), and what MCP tools' image content becomes. The images are
 * stored in the worker's blob store and the run keeps references; models that take images see
 * them next to the text, others the text and a note.
 */

const TOOL_OUTPUT = Symbol.for('durable-agents.tool-output');

/** An image a tool returns: its bytes (or base64), or an http(s) URL the provider fetches. */
export type ToolImage =
  { data: Uint8Array | string; mediaType?: string; name?: string } | { url: string; mediaType?: string; name?: string };

/** A tool's result with images; make one with {@link toolOutput}. */
export interface ToolOutput {
  readonly [TOOL_OUTPUT]: true;
  /** The text the model reads (default: `value` as JSON, or "Success"). */
  readonly text?: string;
  /** The result as data, for the run result's `value` (it is not sent to the model when `text` is given). */
  readonly value?: unknown;
  readonly images: readonly ToolImage[];
}

/**
 * A tool result with images, for models that take them:
 *
 * ```ts
 * execute: async ({ city }) => toolOutput({ text: `The map of ${city}`, images: [{ data: png }] })
 * ```
 *
 * `data` is the bytes (a `Buffer`) or base64; the type is read from them when `mediaType` is not
 * given (PNG, JPEG, GIF and WebP).
 */
export function toolOutput(output: { text?: string; value?: unknown; images?: readonly ToolImage[] }): ToolOutput {
  return { [TOOL_OUTPUT]: true, text: output.text, value: output.value, images: output.images ?? [] };
}

/** Whether a tool's return value is a {@link ToolOutput}. */
export function isToolOutput(value: unknown): value is ToolOutput {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TOOL_OUTPUT] === true;
}

import { toolOutput, type ToolOutput } from '../tool-output';

/** One piece of an MCP tool result's `content`, as far as we read it. */
interface ContentPart {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  description?: string;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
}

/**
 * An MCP tool result as a tool's return value: its text (see {@link mcpResultText}) and, when it
 * holds images, a {@link toolOutput} with them, for models that take images.
 */
export function mcpToolOutput(result: { content?: unknown; structuredContent?: unknown }): string | ToolOutput {
  const text = mcpResultText(result);
  const parts = Array.isArray(result.content) ? (result.content as ContentPart[]) : [];
  const images = parts
    .filter((p) => p.type === 'image' && typeof p.data === 'string')
    .map((p) => ({ data: p.data!, mediaType: p.mimeType }));
  return images.length ? toolOutput({ text, images }) : text;
}

/**
 * The text an LLM sees for an MCP tool result: text parts joined by newlines; images, audio and
 * binary resources described (type, MIME type, size), since a chat-completions tool message
 * carries text only; embedded text resources with their URI; resource links by name and URI. A
 * result with only `structuredContent` is given as its JSON.
 */
export function mcpResultText(result: { content?: unknown; structuredContent?: unknown }): string {
  const parts = Array.isArray(result.content) ? (result.content as ContentPart[]) : [];
  const lines = parts.map(describePart);
  if (lines.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return lines.join('\n');
}

function describePart(part: ContentPart): string {
  switch (part.type) {
    case 'text':
      return part.text ?? '';
    case 'image':
    case 'audio':
      return `[${part.type}: ${part.mimeType ?? 'unknown type'}, ${base64Bytes(part.data)} bytes]`;
    case 'resource': {
      const r = part.resource ?? {};
      if (typeof r.text === 'string')
        return `[resource ${r.uri ?? ''}${r.mimeType ? ` (${r.mimeType})` : ''}]\n${r.text}`;
      return `[resource ${r.uri ?? ''}: ${r.mimeType ?? 'binary'}, ${base64Bytes(r.blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource link: ${part.name ?? part.uri ?? ''}${part.uri && part.name ? ` <${part.uri}>` : ''}${part.description ? ` - ${part.description}` : ''}]`;
    default:
      return `[${part.type} content]`;
  }
}

/** Decoded size of base64 data. */
function base64Bytes(data: string | undefined): number {
  if (!data) return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

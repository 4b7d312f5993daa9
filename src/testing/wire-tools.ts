import type { ChatRequest } from './openai-compatible-server';

/**
 * Another wire format's tools in the Chat Completions shape handlers read (`schema` is the field
 * that holds a tool's JSON Schema there: `input_schema`, `parameters`).
 */
export function chatCompletionsTools(
  tools: ReadonlyArray<Record<string, unknown>> | undefined,
  schema: string,
): Pick<ChatRequest, 'tools'> {
  if (!tools?.length) return {};
  return {
    tools: tools.map((t) => ({
      type: 'function' as const,
      function: { name: String(t.name), description: t.description as string | undefined, parameters: t[schema] },
    })),
  };
}

/** OpenAI's limit on function names, which the LLM sees MCP tools by. */
export const MAX_TOOL_NAME_LENGTH = 64;

/**
 * The name the LLM sees an MCP tool by: `<server>__<tool>`, with characters OpenAI does not allow
 * in function names (anything but letters, digits, `_` and `-`) replaced by `_`. A name longer
 * than 64 characters is cut to 57 and ends with `_` and 6 hex digits of a hash of the full name,
 * so it stays unique and is the same on every worker; so is a name that only its replaced
 * characters told apart from another (see {@link mcpToolNames}).
 */
export function mcpToolName(server: string, tool: string): string {
  const name = `${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return name.length <= MAX_TOOL_NAME_LENGTH ? name : hashed(name, `${server}__${tool}`);
}

/**
 * The LLM-facing names of one server's tools, by original name, unique even where replacing
 * characters made two alike: a tool whose name needed no change keeps it, the other gets a hash.
 */
export function mcpToolNames(server: string, tools: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Set<string>();
  const exact = (tool: string) => mcpToolName(server, tool) === `${server}__${tool}`;
  for (const tool of [...tools.filter(exact), ...tools.filter((t) => !exact(t))]) {
    let name = mcpToolName(server, tool);
    if (taken.has(name)) name = hashed(name, `${server}__${tool}`);
    taken.add(name);
    names.set(tool, name);
  }
  return names;
}

function hashed(name: string, full: string): string {
  return `${name.slice(0, MAX_TOOL_NAME_LENGTH - 7)}_${fnv1a(full)}`;
}

/** 6 hex digits of the 32-bit FNV-1a hash: stable across processes and versions, unlike a random suffix. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0').slice(0, 6);
}

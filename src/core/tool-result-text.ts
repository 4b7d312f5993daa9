/**
 * The text an LLM sees for a tool's return value, as LangChain4j does it: `undefined` (a void tool)
 * becomes `"Success"`, a string goes as is, anything else as JSON.
 */
export function toolResultText(value: unknown): string {
  if (value === undefined) return 'Success';
  if (typeof value === 'string') return value;
  const json = JSON.stringify(value);
  // JSON.stringify returns undefined for functions and symbols; never hand the LLM "undefined".
  return json === undefined ? String(value) : json;
}

/** The text an LLM sees when a tool call could not produce a result. */
export function toolErrorText(message: string): string {
  return message.startsWith('Error:') ? message : `Error: ${message}`;
}

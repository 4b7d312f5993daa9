import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { JsonSchemaType } from '@modelcontextprotocol/sdk/validation/types.js';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { PersonAnswer } from '../define-tool';

/**
 * An MCP server's elicitation (`elicitation/create`, in the middle of a tool call) as a question
 * to a person in the run: the tool asks (`ToolContext.askPerson`) and the call waits durably, for
 * days if need be; answered, the tool is called again, the server asks again, and the person's
 * answer is what the server gets. Pure: what to ask, and the server's answer from the person's.
 */

type ElicitParams = ElicitRequest['params'];

/** What the run shows a person: the server's message, and how to answer it. */
export function elicitationQuestion(server: string, params: ElicitParams): string {
  if (params.mode === 'url')
    return `${server} asks: ${params.message} Open ${params.url}, then approve (or reject to decline).`;
  const fields = Object.entries(params.requestedSchema.properties).map(([name, schema]) => {
    const s = schema as { type?: string; enum?: unknown[]; default?: unknown; description?: string };
    const type = s.enum ? s.enum.map((v) => JSON.stringify(v)).join(' | ') : (s.type ?? 'value');
    const required = params.requestedSchema.required?.includes(name) ? ', required' : '';
    const fallback = s.default !== undefined ? `, default ${JSON.stringify(s.default)}` : '';
    return `"${name}" (${type}${required}${fallback})${s.description ? `: ${s.description}` : ''}`;
  });
  const how =
    fields.length === 1 ? `Approve with the answer as the reason` : `Approve with a JSON object as the reason`;
  return `${server} asks: ${params.message} ${how}: ${fields.join('; ')}. Reject to decline.`;
}

/**
 * The server's answer from the person's: declined when they rejected; for a form, their reason
 * as the content (a JSON object, or the value of the form's one field), checked against the
 * requested schema (the SDK fills in the schema's defaults for fields left out). A reason that
 * does not fit is `problem`: the person is asked again, with it.
 */
export function elicitationAnswer(
  params: ElicitParams,
  answer: PersonAnswer,
): { result: ElicitResult } | { problem: string } {
  if (!answer.approved) return { result: { action: 'decline' } };
  if (params.mode === 'url') return { result: { action: 'accept' } };
  const schema = params.requestedSchema;
  const names = Object.keys(schema.properties);
  const text = answer.text?.trim() ?? '';
  let content: Record<string, unknown>;
  if (text.startsWith('{')) {
    try {
      content = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      return { problem: `the answer is not JSON (${(err as Error).message})` };
    }
  } else if (names.length === 1 && text) {
    content = { [names[0]]: coerce(text, schema.properties[names[0]] as { type?: string }) };
  } else content = {};
  const withDefaults = { ...defaults(schema.properties), ...content };
  const check = new AjvJsonSchemaValidator().getValidator(schema as JsonSchemaType)(withDefaults);
  if (!check.valid) return { problem: `the answer does not fit the form: ${check.errorMessage}` };
  return { result: { action: 'accept', content: content as ElicitResult['content'] } };
}

function defaults(properties: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const fallback = (schema as { default?: unknown }).default;
    if (fallback !== undefined) out[name] = fallback;
  }
  return out;
}

/** A field's value from a person's words: numbers and yes/no as the form's type wants them. */
function coerce(text: string, schema: { type?: string }): unknown {
  if (schema.type === 'number' || schema.type === 'integer') {
    const n = Number(text);
    return Number.isFinite(n) ? n : text;
  }
  if (schema.type === 'boolean') {
    if (/^(yes|true|y)$/i.test(text)) return true;
    if (/^(no|false|n)$/i.test(text)) return false;
  }
  return text;
}

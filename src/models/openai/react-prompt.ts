import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import {
  FINAL_ANSWER_ACTION,
  parseReActOutput,
  ReActParseError,
  REACT_PARSE_ERROR_TOOL,
} from '../../core/run/react-parser';
import type { ChatMessage } from '../../core/messages/chat-message';
import type { ModelReply } from '../../core/messages/model-reply';
import type { ToolSpec } from '../chat-model';
import { imagePart, userMessage } from './chat-images';

/**
 * ReAct for models without a tool API: tools are described in the prompt (LangChain's
 * hwchase17/react format), earlier steps form the scratchpad, and the reply is parsed as text.
 * The conversation itself stays in tool-call form, so limits, immediate return, approvals and
 * summaries work exactly as in `tools` mode.
 */

/** Generation stops before the model invents its own Observation. */
export const REACT_STOP = ['\nObservation'];

const FORMAT_HINT =
  'Use this format: "Thought: ...", then either "Action: <one of the tool names>" and "Action Input: <input>" on the next line, or "Final Answer: <answer>".';

/** The chat messages for a ReAct model call: earlier turns as chat, the current question as the ReAct prompt. */
export function reactMessages(
  messages: readonly ChatMessage[],
  specs: readonly ToolSpec[],
  final: boolean,
): ChatCompletionMessageParam[] {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const out: ChatCompletionMessageParam[] = [];
  for (const m of messages.slice(0, Math.max(lastUser, 0))) {
    // Earlier turns: their questions and answers; their intermediate steps would only cost tokens.
    if (m.role === 'system') out.push({ role: 'system', content: m.content });
    else if (m.role === 'user') out.push(userMessage(m));
    else if (m.role === 'assistant' && !m.tool_calls?.length && m.content)
      out.push({ role: 'assistant', content: m.content });
  }
  const question = lastUser >= 0 ? String(messages[lastUser].content) : '';
  const results = new Map<string, string>();
  for (const m of messages) if (m.role === 'tool') results.set(m.tool_call_id, m.content);
  let scratchpad = '';
  for (const m of messages.slice(lastUser + 1)) {
    if (m.role !== 'assistant' || !m.tool_calls?.length) continue;
    scratchpad += `${m.content ?? ''}\nObservation: ${results.get(m.tool_calls[0].id) ?? ''}\nThought: `;
  }
  if (final) scratchpad += '\n\nI now need to return a final answer based on the previous steps:';
  const tools = specs.map((s) => `${s.name}(${reactInputHint(s.parameters)}) - ${s.description}`).join('\n');
  const toolNames = specs.map((s) => s.name);
  const prompt = `Answer the following questions as best you can. You have access to the following tools:

${tools}

Use the following format:

Question: the input question you must answer
Thought: you should always think about what to do
Action: the action to take, should be one of [${toolNames.join(', ')}]
Action Input: the input to the action
Observation: the result of the action
... (this Thought/Action/Action Input/Observation can repeat N times)
Thought: I now know the final answer
Final Answer: the final answer to the original input question

Begin!

Question: ${question}
Thought:${scratchpad}`;
  // The question's images, and those its tools returned, go with the prompt.
  const images = messages
    .slice(Math.max(lastUser, 0))
    .flatMap((m) => (m.role === 'user' || m.role === 'tool' ? (m.images ?? []) : []));
  out.push({
    role: 'user',
    content: images.length ? [{ type: 'text', text: prompt }, ...images.map(imagePart)] : prompt,
  });
  return out;
}

/** How the Action Input is written: a plain value for one parameter, a JSON object for several. */
function reactInputHint(parameters: Record<string, unknown>): string {
  const props = Object.keys((parameters.properties as object) ?? {});
  return props.length === 1 ? props[0] : `JSON object with ${props.join(', ')}`;
}

/** Turns a ReAct reply into the model reply the core understands; parse errors become an Observation for the model. */
export function reactReply(
  text: string,
  specs: readonly ToolSpec[],
  base: Omit<ModelReply, 'content' | 'toolCalls'>,
  final = false,
): ModelReply {
  if (final) {
    // The last pass at the iteration limit may not call tools: its answer is whatever it says.
    const answer = text.includes(FINAL_ANSWER_ACTION) ? text.split(FINAL_ANSWER_ACTION).pop()!.trim() : text.trim();
    return { ...base, content: answer, toolCalls: [] };
  }
  try {
    const parsed = parseReActOutput(text);
    if (parsed.type === 'finish') return { ...base, content: parsed.output, toolCalls: [] };
    return {
      ...base,
      content: parsed.log,
      toolCalls: [
        {
          id: '',
          type: 'function',
          function: { name: parsed.tool, arguments: reactArguments(specs, parsed.tool, parsed.toolInput) },
        },
      ],
    };
  } catch (err) {
    if (!(err instanceof ReActParseError)) throw err;
    const observation = `${err.observation}\n${FORMAT_HINT}`;
    return {
      ...base,
      content: text,
      toolCalls: [
        {
          id: '',
          type: 'function',
          function: { name: REACT_PARSE_ERROR_TOOL, arguments: JSON.stringify({ observation }) },
        },
      ],
    };
  }
}

/**
 * The JSON arguments for an Action Input. A tool with one parameter takes the input as that
 * parameter (a number when the schema wants one); a tool with several takes a JSON object.
 * Anything else is passed through, and the tool activity reports it as invalid arguments.
 */
export function reactArguments(specs: readonly ToolSpec[], tool: string, input: string): string {
  const parameters = specs.find((s) => s.name === tool)?.parameters;
  if (!parameters) return '{}';
  const props = (parameters.properties ?? {}) as Record<string, { type?: string }>;
  const names = Object.keys(props);
  if (names.length === 1) {
    const type = props[names[0]]?.type;
    const value =
      (type === 'number' || type === 'integer') && input.trim() !== '' && !Number.isNaN(Number(input))
        ? Number(input)
        : input;
    return JSON.stringify({ [names[0]]: value });
  }
  return input;
}

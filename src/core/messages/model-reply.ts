import type { ReasoningPart, ToolCall, Usage } from './chat-message';
import type { ToolInfo } from './tool-info';
/** What the model-call activity returns: only the new assistant message, never the conversation. */
export interface ModelReply {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: string | null;
  usage: Usage;
  /** Tools a worker's tool provider added to this one model call (dynamic tools), beyond the run's own. */
  providedTools?: ToolInfo[];
  /** Structured output: the final answer parsed and valid under the run's output schema. */
  output?: unknown;
  /** Structured output: why the final answer is not valid under the schema; it goes back to the LLM. */
  outputError?: string;
  /** The activity attempt that produced this reply, when not the first (it voids text streamed by earlier ones). */
  attempt?: number;
  /** The model's reasoning, for the provider to get back with the rest of the conversation. */
  reasoning?: ReasoningPart[];
  /** The model that answered, by the name runs use (its usage is counted under it). */
  model?: string;
  /**
   * With memory by tokens: the tokens of the messages sent from `countFrom` on, as `[index, tokens]`,
   * counted by the activity's tokenizer (absent when the worker has none).
   */
  counted?: Array<[number, number]>;
}

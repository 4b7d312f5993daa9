import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { FINAL_ANSWER_ACTION } from '../../core/run/react-parser';

/**
 * Assembles streamed Chat Completions chunks into the completion a non-streaming call returns
 * (text, tool calls by index, the legacy `function_call`, finish reason, usage), so the rest of
 * the model call is the same either way.
 *
 * Hand-written rather than the SDK's `ChatCompletionStream`: that one throws on chunks that
 * OpenAI-compatible servers commonly leave out (a `role`, a final `finish_reason`), and we only
 * need the first choice.
 */
export class CompletionAccumulator {
  private id = '';
  private model = '';
  private created = 0;
  private content: string | null = null;
  private finishReason: string | null = null;
  private readonly toolCalls: Array<{ id: string; name: string; arguments: string }> = [];
  private functionCall?: { name: string; arguments: string };
  private usage?: ChatCompletion['usage'];

  /** Adds a chunk; returns the text it adds to the answer (possibly empty). */
  add(chunk: ChatCompletionChunk): string {
    this.id ||= chunk.id ?? '';
    this.model ||= chunk.model ?? '';
    this.created ||= chunk.created ?? 0;
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) return '';
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    const delta = choice.delta ?? {};
    for (const part of delta.tool_calls ?? []) {
      const call = (this.toolCalls[part.index ?? this.toolCalls.length] ??= { id: '', name: '', arguments: '' });
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
    }
    if (delta.function_call) {
      this.functionCall ??= { name: '', arguments: '' };
      if (delta.function_call.name) this.functionCall.name += delta.function_call.name;
      if (delta.function_call.arguments) this.functionCall.arguments += delta.function_call.arguments;
    }
    const text = typeof delta.content === 'string' ? delta.content : '';
    if (text) this.content = (this.content ?? '') + text;
    return text;
  }

  /** The whole completion, as a non-streaming call would have returned it. */
  completion(): ChatCompletion {
    const toolCalls = this.toolCalls
      .filter(Boolean)
      .map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
    const finish =
      this.finishReason ?? (toolCalls.length ? 'tool_calls' : this.functionCall ? 'function_call' : 'stop');
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices: [
        {
          index: 0,
          logprobs: null,
          finish_reason: finish as ChatCompletion.Choice['finish_reason'],
          message: {
            role: 'assistant',
            content: this.content,
            refusal: null,
            ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
            ...(this.functionCall ? { function_call: this.functionCall } : {}),
          },
        },
      ],
      ...(this.usage ? { usage: this.usage } : {}),
    };
  }
}

/**
 * What of a ReAct reply a person should see while it is written: only the Final Answer. Text is
 * held back until `Final Answer:` has appeared, leading and trailing blanks are held back too
 * (the final content is trimmed), so what is shown is always a beginning of the final answer.
 */
export class FinalAnswerFilter {
  private raw = '';
  private shown = 0;

  /** Adds raw model text; returns the answer text that may be shown now. */
  push(text: string): string {
    this.raw += text;
    const at = this.raw.indexOf(FINAL_ANSWER_ACTION);
    if (at < 0) return '';
    const answer = this.raw
      .slice(at + FINAL_ANSWER_ACTION.length)
      .trimStart()
      .trimEnd();
    const out = answer.slice(this.shown);
    this.shown = answer.length;
    return out;
  }
}

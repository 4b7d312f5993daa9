/**
 * The ReAct text format (Thought / Action / Action Input / Observation / Final Answer), parsed the
 * way LangChain's `ReActSingleInputOutputParser` does, so prompts and models tuned for LangChain
 * agents behave the same here. Pure: the model-call activity and tests use it alike.
 */

export const FINAL_ANSWER_ACTION = 'Final Answer:';

/**
 * The pseudo tool a ReAct parse error is recorded as (LangChain's `_Exception`): its "result" is
 * the correction the model reads as the Observation, and the step counts as an iteration.
 */
export const REACT_PARSE_ERROR_TOOL = '_Exception';

/** The model wants a tool: `tool` with `toolInput` (the raw Action Input text). */
export interface ReActAction {
  type: 'action';
  tool: string;
  toolInput: string;
  /** The model's whole output for this step; it goes into the scratchpad. */
  log: string;
}

/** The model answered. */
export interface ReActFinish {
  type: 'finish';
  output: string;
  log: string;
}

/**
 * Output the parser cannot use. `observation` is what the model should read next (LangChain's
 * `handle_parsing_errors`): what is missing, and the format to use.
 */
export class ReActParseError extends Error {
  constructor(
    message: string,
    readonly observation: string,
    readonly llmOutput: string,
  ) {
    super(message);
    this.name = 'ReActParseError';
  }
}

/** LangChain's parse error texts, which the model reads back as the Observation: no Action after a Thought. */
export const MISSING_ACTION_AFTER_THOUGHT = "Invalid Format: Missing 'Action:' after 'Thought:'";
/** An Action without its Action Input. */
export const MISSING_ACTION_INPUT_AFTER_ACTION = "Invalid Format: Missing 'Action Input:' after 'Action:'";
/** Both a Final Answer and an Action. */
export const FINAL_ANSWER_AND_ACTION = 'Parsing LLM output produced both a final answer and a parse-able action';

const ACTION = /Action\s*\d*\s*:[\s]*(.*?)[\s]*Action\s*\d*\s*Input\s*\d*\s*:[\s]*(.*)/s;
const ACTION_ONLY = /Action\s*\d*\s*:[\s]*(.*?)/s;
const ACTION_INPUT_ONLY = /[\s]*Action\s*\d*\s*Input\s*\d*\s*:[\s]*(.*)/s;

/**
 * Parses one ReAct step. The Action Input may span lines; spaces and then double quotes around it
 * are stripped. The answer is the text after the last `Final Answer:`. Text with both a parseable
 * action and a final answer, or with neither, is a {@link ReActParseError}.
 */
export function parseReActOutput(text: string): ReActAction | ReActFinish {
  const includesAnswer = text.includes(FINAL_ANSWER_ACTION);
  const match = ACTION.exec(text);
  if (match) {
    if (includesAnswer)
      throw new ReActParseError(
        `${FINAL_ANSWER_AND_ACTION}: ${text}`,
        `${FINAL_ANSWER_AND_ACTION}. Give either an Action with its Action Input, or a Final Answer, not both.`,
        text,
      );
    return { type: 'action', tool: match[1].trim(), toolInput: strip(strip(match[2], ' '), '"'), log: text };
  }
  if (includesAnswer) return { type: 'finish', output: text.split(FINAL_ANSWER_ACTION).pop()!.trim(), log: text };
  if (!ACTION_ONLY.test(text))
    throw new ReActParseError(`Could not parse LLM output: \`${text}\``, MISSING_ACTION_AFTER_THOUGHT, text);
  if (!ACTION_INPUT_ONLY.test(text))
    throw new ReActParseError(`Could not parse LLM output: \`${text}\``, MISSING_ACTION_INPUT_AFTER_ACTION, text);
  throw new ReActParseError(`Could not parse LLM output: \`${text}\``, `Could not parse LLM output: \`${text}\``, text);
}

/** Python's `str.strip(chars)` for one character. */
function strip(s: string, ch: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s[start] === ch) start++;
  while (end > start && s[end - 1] === ch) end--;
  return s.slice(start, end);
}

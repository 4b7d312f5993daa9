import {
  parseReActOutput,
  ReActParseError,
  MISSING_ACTION_AFTER_THOUGHT,
  MISSING_ACTION_INPUT_AFTER_ACTION,
} from '../../src/core/run/react-parser';

/** Cases written anew from the behaviour LangChain's ReAct and MRKL parser tests pin down. */

const action = (text: string) => {
  const r = parseReActOutput(text);
  if (r.type !== 'action') throw new Error(`expected an action, got ${JSON.stringify(r)}`);
  return r;
};
const parseError = (text: string): ReActParseError => {
  try {
    parseReActOutput(text);
  } catch (err) {
    if (err instanceof ReActParseError) return err;
    throw err;
  }
  throw new Error(`expected a parse error for ${JSON.stringify(text)}`);
};

describe('parseReActOutput', () => {
  it('reads an action and its input, keeping the whole text as the log', () => {
    const text = 'Thought: I need the weather\nAction: search_weather\nAction Input: Beijing';
    expect(parseReActOutput(text)).toEqual({ type: 'action', tool: 'search_weather', toolInput: 'Beijing', log: text });
  });

  it('tolerates extra whitespace and numbered actions', () => {
    expect(action('Thought: x\nAction :  search  \nAction Input :   what is up').toolInput).toBe('what is up');
    expect(action('Action 1: search\nAction 1 Input: query')).toMatchObject({ tool: 'search', toolInput: 'query' });
    expect(action('Action:search\nAction Input:query')).toMatchObject({ tool: 'search', toolInput: 'query' });
  });

  it('strips surrounding spaces, then double quotes, from the input', () => {
    expect(action('Action: search\nAction Input: "what is the temperature in SF?"').toolInput).toBe(
      'what is the temperature in SF?',
    );
    expect(action('Action: search\nAction Input:    "quoted"   ').toolInput).toBe('quoted');
    expect(action('Action: search\nAction Input: say "hi" now').toolInput).toBe('say "hi" now');
  });

  it('takes a multi-line action input whole', () => {
    const r = action('Thought: run it\nAction: python\nAction Input: ```\nimport math\nprint(math.sqrt(10))\n```');
    expect(r.toolInput).toBe('```\nimport math\nprint(math.sqrt(10))\n```');
    expect(action('Action: add\nAction Input: {"a": 5,\n "b": 5}').toolInput).toBe('{"a": 5,\n "b": 5}');
  });

  it('reads a final answer: the text after the last "Final Answer:"', () => {
    expect(parseReActOutput('Thought: I now know the final answer\nFinal Answer: It is 30 degrees.')).toEqual({
      type: 'finish',
      output: 'It is 30 degrees.',
      log: 'Thought: I now know the final answer\nFinal Answer: It is 30 degrees.',
    });
    expect(parseReActOutput('Final Answer: draft\nFinal Answer:  the real one\nover two lines ')).toMatchObject({
      output: 'the real one\nover two lines',
    });
  });

  it('refuses text with both a parseable action and a final answer', () => {
    const err = parseError(
      'Thought: x\nAction: search\nAction Input: q\nObservation: r\nThought: done\nFinal Answer: 42',
    );
    expect(err.message).toMatch(/both a final answer and a parse-able action/);
    expect(err.observation).toMatch(/either an Action with its Action Input, or a Final Answer, not both/);
  });

  it('refuses text with neither, saying what is missing', () => {
    expect(parseError('Thought: I am not sure what to do').observation).toBe(MISSING_ACTION_AFTER_THOUGHT);
    expect(parseError('Thought: search it\nAction: search').observation).toBe(MISSING_ACTION_INPUT_AFTER_ACTION);
    expect(parseError('just some text').message).toBe('Could not parse LLM output: `just some text`');
    expect(parseError('').observation).toBe(MISSING_ACTION_AFTER_THOUGHT);
  });
});

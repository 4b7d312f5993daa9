/**
 * The memory tools an agent can be given by name (`tools: ['remember', 'recall']`, or
 * `--tools remember,recall`): the model keeps, finds and drops facts about the run's user. Unlike
 * `sleep`, they are activities (they reach a database); these are their names and what the model
 * is told, which clients check names against.
 */

/** Keeps a fact about the run's user. */
export const REMEMBER = 'remember';
/** Finds the facts about the run's user that bear on a question. */
export const RECALL = 'recall';
/** Drops facts about the run's user by id (from `recall`). */
export const FORGET = 'forget';

/** The memory tools' names, for agents' `tools` (`tools: [...memoryTools]`). */
export const memoryTools = [REMEMBER, RECALL, FORGET] as const;

/** The descriptions and JSON Schemas the model is offered for the memory tools. */
export const MEMORY_TOOL_SPECS = {
  [REMEMBER]: {
    description:
      'Remembers one fact about the user for later conversations (a preference, a detail of their account, a decision they made). One short statement per call, in the third person ("Prefers aisle seats"). Returns the fact\'s id.',
    parameters: {
      type: 'object',
      properties: {
        text: { type: 'string', description: 'The fact, one sentence' },
        value: { type: 'object', description: 'Optional structured detail, e.g. {"seat":"aisle"}' },
        confidence: { type: 'number', description: 'How sure, 0 to 1 (default 1: the user said so)' },
      },
      required: ['text'],
      additionalProperties: false,
    },
  },
  [RECALL]: {
    description:
      'Finds what you remember about the user that bears on a question, from earlier conversations. Returns the matching facts, best first, with their ids and dates.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What you want to know, in a few words' },
        limit: { type: 'number', description: 'At most this many facts (default 8)' },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
  [FORGET]: {
    description:
      'Forgets facts about the user by id (ids come from recall): when the user asks you to, or a fact is no longer true.',
    parameters: {
      type: 'object',
      properties: {
        ids: { type: 'array', items: { type: 'string' }, description: 'The ids of the facts to forget' },
      },
      required: ['ids'],
      additionalProperties: false,
    },
  },
} as const;

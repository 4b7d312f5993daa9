import type { ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { elicitationAnswer, elicitationQuestion } from '../../src/tools/mcp-client/server-elicitation';

/** A server's elicitation as a question to a person, and their answer as the server's. */
const form = (properties: Record<string, object>, required?: string[]): ElicitRequest['params'] => ({
  mode: 'form',
  message: 'Who are you?',
  requestedSchema: { type: 'object', properties: properties as never, ...(required ? { required } : {}) },
});

it('asks with the form spelled out', () => {
  expect(
    elicitationQuestion(
      'crm',
      form({ name: { type: 'string', description: 'Full name' }, age: { type: 'integer', default: 30 } }, ['name']),
    ),
  ).toBe(
    'crm asks: Who are you? Approve with a JSON object as the reason: "name" (string, required): Full name; "age" (integer, default 30). Reject to decline.',
  );
  expect(elicitationQuestion('crm', form({ city: { type: 'string', enum: ['Paris', 'Rome'] } }))).toBe(
    'crm asks: Who are you? Approve with the answer as the reason: "city" ("Paris" | "Rome"). Reject to decline.',
  );
  expect(
    elicitationQuestion('bank', {
      mode: 'url',
      message: 'Sign in.',
      url: 'https://bank.example/login',
      elicitationId: 'e1',
    }),
  ).toBe('bank asks: Sign in. Open https://bank.example/login, then approve (or reject to decline).');
});

it('answers with the JSON, or the one field, checked against the form; a rejection declines', () => {
  const person = form({ name: { type: 'string' }, age: { type: 'integer', minimum: 0, default: 30 } }, ['name']);
  expect(elicitationAnswer(person, { approved: true, text: '{"name": "Ada"}' })).toEqual({
    result: { action: 'accept', content: { name: 'Ada' } },
  });
  expect(elicitationAnswer(person, { approved: true, text: '{"age": -1}' })).toMatchObject({
    problem: expect.stringMatching(/^the answer does not fit the form: /),
  });
  expect(elicitationAnswer(person, { approved: true, text: '{nope' })).toMatchObject({
    problem: expect.stringMatching(/^the answer is not JSON/),
  });
  expect(elicitationAnswer(person, { approved: false, text: 'no' })).toEqual({ result: { action: 'decline' } });
  const one = form({ count: { type: 'integer' } }, ['count']);
  expect(elicitationAnswer(one, { approved: true, text: '7' })).toEqual({
    result: { action: 'accept', content: { count: 7 } },
  });
  expect(elicitationAnswer(one, { approved: true })).toMatchObject({ problem: expect.stringContaining('count') });
});

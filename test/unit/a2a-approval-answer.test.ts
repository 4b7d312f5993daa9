import { Message } from '@a2a-js/sdk';
import { approvalAnswer } from '../../src/a2a/conversation-executor';

/** How an A2A message answers what a task waits on: approvals (yes/no) and tools' questions (any words). */
const said = (text: string) => Message.fromJSON({ messageId: 'm', role: 'ROLE_USER', parts: [{ text }] });
const data = (value: object) => Message.fromJSON({ messageId: 'm', role: 'ROLE_USER', parts: [{ data: value }] });

it('reads yes and no, with the rest as the reason', () => {
  expect(approvalAnswer(said('yes'), ['c1', 'c2'])).toEqual([
    { callId: 'c1', approve: true },
    { callId: 'c2', approve: true },
  ]);
  expect(approvalAnswer(said('No, too much money'), ['c1'])).toEqual([
    { callId: 'c1', approve: false, reason: 'too much money' },
  ]);
  expect(approvalAnswer(said('maybe later'), ['c1'])).toBeUndefined();
});

it('reads a data part, for one call or all', () => {
  expect(approvalAnswer(data({ approved: false, reason: 'no', callId: 'c2' }), ['c1', 'c2'])).toEqual([
    { callId: 'c2', approve: false, reason: 'no' },
  ]);
  expect(approvalAnswer(data({ approved: true }), ['c1'])).toEqual([{ callId: 'c1', approve: true }]);
});

it("takes any words as the answer to a tool's question, and no as declining it", () => {
  expect(approvalAnswer(said('account 42'), ['q1'], ['q1'])).toEqual([
    { callId: 'q1', approve: true, reason: 'account 42' },
  ]);
  expect(approvalAnswer(said('yes, from account 42'), ['q1'], ['q1'])).toEqual([
    { callId: 'q1', approve: true, reason: 'from account 42' },
  ]);
  expect(approvalAnswer(said('no'), ['q1'], ['q1'])).toEqual([{ callId: 'q1', approve: false }]);
});

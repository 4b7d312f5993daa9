import { approvalAsk, approvalForm, decisionOf } from '../../src/mcp-server/approval-form';
import { isModernOpening } from '../../src/mcp-server/stdio-server';

/** The approval form both MCP revisions ask with, and what an answer to it decides. */
describe('approval form', () => {
  const pending = { callId: 'c1', name: 'transfer', arguments: {}, summary: 'transfer(to="bob")' };

  it('asks to approve a call, or asks a tool’s question, naming the agent that asks', () => {
    const ask = approvalAsk(pending);
    expect(ask).toEqual({ callId: 'c1', tool: 'transfer', summary: 'transfer(to="bob")' });
    expect(approvalForm(ask, 'run-1')).toMatchObject({
      mode: 'form',
      message: 'Approve transfer(to="bob")? The agent\'s run run-1 waits for this decision.',
      requestedSchema: { properties: { approve: { type: 'boolean', default: false } }, required: ['approve'] },
    });
    const question = approvalAsk({ ...pending, question: 'Which account?', agent: 'payer' });
    expect(approvalForm(question, 'run-1').message).toBe('Which account? (asked by the agent payer)');
  });

  it('decides from the answer: accepted with approve, refused when declined or unticked, nothing when cancelled', () => {
    expect(decisionOf({}, { action: 'accept', content: { approve: true } })).toEqual({ approve: true });
    expect(decisionOf({}, { action: 'accept', content: { approve: false, reason: ' too much ' } })).toEqual({
      approve: false,
      reason: 'too much',
    });
    expect(decisionOf({}, { action: 'decline' })).toEqual({ approve: false, reason: 'declined by the MCP client' });
    // A tool's question answered in words is answered, box ticked or not.
    expect(decisionOf({ question: 'Which?' }, { action: 'accept', content: { reason: 'savings' } })).toEqual({
      approve: true,
      reason: 'savings',
    });
    expect(decisionOf({}, { action: 'cancel' })).toBeUndefined();
    expect(decisionOf({}, 'yes')).toBeUndefined();
    expect(decisionOf({}, { method: 'elicitation/create', result: {} })).toBeUndefined();
  });
});

describe('stdio opening', () => {
  it('opens 2026-07-28 with a request carrying its envelope, 2025-11-25 otherwise', () => {
    const envelope = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } };
    expect(isModernOpening({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: envelope })).toBe(true);
    expect(isModernOpening({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} } as never)).toBe(false);
    expect(isModernOpening({ jsonrpc: '2.0', id: 1, result: envelope } as never)).toBe(false);
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Message, Role } from '@a2a-js/sdk';
import { messageForAgent, outcomeProblem } from '../../src/a2a/a2a-server-extension';
import { loadAgentModule } from '../../src/cli/agent-module';

describe('A2AServerExtension outcomes', () => {
  it('accepts each kind, well formed', () => {
    expect(outcomeProblem({ kind: 'agent', text: 'hi' }, false)).toBeUndefined();
    expect(outcomeProblem({ kind: 'message', parts: [{ text: 'pong' }] }, false)).toBeUndefined();
    expect(
      outcomeProblem(
        {
          kind: 'task',
          state: 'rejected',
          message: 'no',
          artifacts: [{ parts: [{ raw: 'dGNr', filename: 'a.txt' }, { data: { a: 1 } }, { url: 'https://x/y' }] }],
        },
        false,
      ),
    ).toBeUndefined();
  });

  it('names what is wrong with a malformed one, and the fix', () => {
    expect(outcomeProblem('yes', false)).toMatch(/must return an outcome object or nothing/);
    expect(outcomeProblem({ kind: 'agent' }, false)).toMatch(/without its text/);
    expect(outcomeProblem({ kind: 'reply' }, false)).toMatch(/use "agent", "message" or "task"/);
    expect(outcomeProblem({ kind: 'message', parts: [] }, false)).toMatch(/without parts/);
    expect(outcomeProblem({ kind: 'message', parts: [{ text: 'a', data: 1 }] }, false)).toMatch(
      /with text and data: give exactly one of text, raw \(base64\), url or data/,
    );
    expect(outcomeProblem({ kind: 'task', artifacts: [{ parts: [{ raw: 'not base64!' }] }] }, false)).toMatch(
      /raw bytes are not base64/,
    );
    expect(outcomeProblem({ kind: 'task', state: 'done' }, false)).toMatch(/use "completed", "failed" or "rejected"/);
    expect(outcomeProblem({ kind: 'message', parts: [{ data: null }] }, false)).toMatch(/data is null/);
    expect(outcomeProblem({ kind: 'message', parts: [{ text: 'a' }], metadata: 'x' }, false)).toMatch(
      /metadata is not an object/,
    );
  });

  it('gives a follow-up of a task to the agent only: the task is a turn of its conversation', () => {
    expect(outcomeProblem({ kind: 'agent', text: 'yes' }, true)).toBeUndefined();
    expect(outcomeProblem({ kind: 'message', parts: [{ text: 'x' }] }, true)).toMatch(/follow-up of a task/);
  });

  it('gives the agent the text in place of the text and data parts, keeping the files', () => {
    const message = Message.fromJSON({
      messageId: 'm1',
      role: 'ROLE_USER',
      parts: [{ text: 'look' }, { data: { a: 1 } }, { url: 'https://x/cat.png', mediaType: 'image/png' }],
    });
    const seen = messageForAgent(message, '[m1] look');
    expect(seen.role).toBe(Role.ROLE_USER);
    expect(Message.toJSON(seen)).toMatchObject({
      messageId: 'm1',
      parts: [{ text: '[m1] look' }, { url: 'https://x/cat.png', mediaType: 'image/png' }],
    });
  });
});

describe('--module of a2a', () => {
  it("loads a module's `a2aServer`, and says what is wrong with one that is not an extension", () => {
    const dir = mkdtempSync(join(tmpdir(), 'a2a-module-'));
    const good = join(dir, 'good.js');
    writeFileSync(good, 'exports.a2aServer = { onMessage() {} };');
    expect(loadAgentModule(good, { a2aServer: true }).a2aServer).toBeDefined();
    const bad = join(dir, 'bad.js');
    writeFileSync(bad, 'exports.a2aServer = { onMessage: 1 };');
    expect(() => loadAgentModule(bad, { a2aServer: true })).toThrow(/`a2aServer` must be an object with an `onMessage/);
    // `mcp` does not serve an A2A extension: a module of nothing else serves nothing there.
    expect(() => loadAgentModule(good, { mcpServer: true })).toThrow(
      /exports neither `agents` nor `tools` nor `mcpServer`/,
    );
  });
});

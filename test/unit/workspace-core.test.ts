import {
  localAddressProblem,
  hostAllowed,
  runWorkspace,
  wantsWorkspace,
  workspaceAt,
  workspaceOptionsProblem,
} from '../../src/core/workspace/workspace-options';
import { commandReport, editText, numberedLines } from '../../src/core/workspace/workspace-tools';
import { applyToolOutcomes, startRun } from '../../src/core/run/agent-loop';
import { validateAgentInput } from '../../src/core/run/run-input';
import { forkAt } from '../../src/core/conversation/branches';
import {
  carryOver,
  startConversation as newConversation,
  startTurn,
  finishTurn,
} from '../../src/core/conversation/conversation';
import { carriedRunState } from '../../src/core/run/run-carry';
import type { ToolInfo } from '../../src/core/messages/tool-info';
import type { RunState } from '../../src/core/state/run-state';

const tool = (name: string, workspace?: true): ToolInfo => ({
  name,
  immediate: false,
  timeoutMs: 60_000,
  retry: { maximumAttempts: 3, initialIntervalMs: 1000 },
  ...(workspace ? { workspace } : {}),
});

describe('workspace options', () => {
  it('accepts true and known options, refusing the rest with the fix', () => {
    expect(workspaceOptionsProblem(true)).toBeUndefined();
    expect(workspaceOptionsProblem({ network: ['registry.npmjs.org', '*.example.com'], commandTimeout: '2m' })).toBe(
      undefined,
    );
    expect(workspaceOptionsProblem({ netwrk: [] })).toMatch(/no option "netwrk" \(it has network/);
    expect(workspaceOptionsProblem({ network: ['http://x.com'] })).toMatch(/not a host name/);
    expect(workspaceOptionsProblem({ commandTimeout: '5' })).toMatch(/duration/);
    expect(workspaceOptionsProblem({ commandTimeout: '2h' })).toMatch(/at most 1h/);
    expect(workspaceOptionsProblem({ memoryMb: 0 })).toMatch(/whole number above 0/);
    expect(workspaceOptionsProblem('yes')).toMatch(/must be true or an object/);
    expect(validateAgentInput({ message: 'x', workspace: { diskMb: -1 } })).toEqual([
      expect.stringContaining('workspace.diskMb'),
    ]);
  });

  it('applies defaults, and matches hosts exactly or by subdomain', () => {
    expect(runWorkspace(true)).toEqual({
      network: [],
      commandTimeoutMs: 120_000,
      memoryMb: 2048,
      diskMb: 1024,
      processes: 256,
    });
    expect(runWorkspace({ commandTimeout: '30s' }, 'sha256:x')).toMatchObject({
      commandTimeoutMs: 30_000,
      ref: 'sha256:x',
    });
    expect(hostAllowed('registry.npmjs.org', ['registry.npmjs.org'])).toBe(true);
    expect(hostAllowed('api.example.com', ['*.example.com'])).toBe(true);
    expect(hostAllowed('example.com', ['*.example.com'])).toBe(false);
    expect(hostAllowed('evil-example.com', ['*.example.com'])).toBe(false);
    expect(hostAllowed('EXAMPLE.org.', ['example.org'])).toBe(true);
  });

  it('gives a run a workspace when asked, or when one of its tools needs one; never when refused', () => {
    expect(wantsWorkspace(undefined, [tool('lookup')])).toBe(false);
    expect(wantsWorkspace(undefined, [tool('bash', true)])).toBe(true);
    expect(wantsWorkspace(true, [])).toBe(true);
    expect(wantsWorkspace(false, [tool('bash', true)])).toBe(false);
    expect(startRun({ message: 'x' }, [tool('bash', true)]).workspace).toMatchObject({ diskMb: 1024 });
    expect(startRun({ message: 'x' }, [tool('lookup')])).not.toHaveProperty('workspace');
  });

  it('finds the state as of a point of the messages: the last one a tool result or user message names', () => {
    expect(workspaceAt([])).toBeUndefined();
    expect(
      workspaceAt([
        { role: 'user', content: 'a', workspace: '' },
        { role: 'tool', tool_call_id: '1', content: 'ok', workspace: 'sha256:1' },
        { role: 'tool', tool_call_id: '2', content: 'ok' },
      ]),
    ).toBe('sha256:1');
    expect(
      workspaceAt([
        { role: 'tool', tool_call_id: '1', content: 'ok', workspace: 'sha256:1' },
        { role: 'user', content: 'b', workspace: '' },
      ]),
    ).toBeUndefined();
  });
});

describe("the sandbox's way out", () => {
  it("reaches the worker's own addresses only when the allow-list names them", () => {
    expect(localAddressProblem('pypi.org', '151.101.0.223', ['pypi.org'])).toBeUndefined();
    expect(localAddressProblem('evil.example.com', '127.0.0.1', ['*.example.com'])).toMatch(
      /resolves to 127\.0\.0\.1, an address of the worker itself .*names them \("localhost" or the address\)/,
    );
    for (const address of ['127.0.0.53', '::1', '::', '0.0.0.0', '169.254.169.254', 'fe80::1', '::ffff:127.0.0.1'])
      expect(localAddressProblem('pypi.org', address, ['pypi.org'])).toBeDefined();
    expect(localAddressProblem('localhost', '127.0.0.1', ['localhost'])).toBeUndefined();
    expect(localAddressProblem('localhost', '::1', ['localhost'])).toBeUndefined();
    expect(localAddressProblem('127.0.0.1', '127.0.0.1', ['127.0.0.1'])).toBeUndefined();
    // A private network a team names is its to allow.
    expect(localAddressProblem('git.corp', '10.1.2.3', ['git.corp'])).toBeUndefined();
  });
});

describe('the loop and conversations carry the workspace', () => {
  it('commits a call’s state with its result, and the run goes on from the last one', () => {
    let state: RunState = startRun({ message: 'x', workspace: true }, [tool('bash', true)]);
    state = {
      ...state,
      phase: {
        kind: 'tools',
        calls: ['a', 'b'].map((id) => ({
          call: { id, type: 'function' as const, function: { name: 'bash', arguments: '{}' } },
          arguments: {},
          immediate: false,
          tool: tool('bash', true),
        })),
      },
    };
    const next = applyToolOutcomes(state, [
      { result: 'ok', error: false, workspace: { ref: 'sha256:1', added: ['a'], changed: [], removed: [] } },
      { result: 'ok', error: false, workspace: { ref: 'sha256:2', added: [], changed: ['a'], removed: [] } },
    ]);
    expect(next.workspace?.ref).toBe('sha256:2');
    expect(next.messages.slice(-2).map((m) => (m.role === 'tool' ? m.workspace : null))).toEqual([
      'sha256:1',
      'sha256:2',
    ]);
    expect(next.toolExecutions.map((e) => e.workspace?.added)).toEqual([['a'], []]);
  });

  it('notes each turn’s state on its message, so a fork there starts from it', () => {
    let conv = newConversation({ workspace: true });
    conv = { ...conv, tools: [tool('bash', true)] };
    const turn1 = startTurn(conv, { message: 'one' });
    expect(turn1.messages[0]).toMatchObject({ role: 'user', workspace: '' });
    conv = finishTurn(conv, { ...turn1, workspace: { ...turn1.workspace!, ref: 'sha256:1' } });
    expect(conv.workspace).toBe('sha256:1');
    const turn2 = startTurn(conv, { message: 'two' });
    expect(turn2.workspace?.ref).toBe('sha256:1');
    expect(turn2.messages.at(-1)).toMatchObject({ role: 'user', content: 'two', workspace: 'sha256:1' });
    conv = finishTurn(conv, { ...turn2, workspace: { ...turn2.workspace!, ref: 'sha256:2' } });
    // Forked before "two": its state; before "one": empty.
    expect(forkAt(conv, 1).workspace).toBe('sha256:1');
    expect(forkAt(conv, 0)).not.toHaveProperty('workspace');
  });
});

describe('the workspace tools’ pure parts', () => {
  it('edits an exact string once, or every one when asked, and says what to fix otherwise', () => {
    expect(editText('a b a', 'b', 'c')).toEqual({ text: 'a c a', replaced: 1 });
    expect(editText('a b a', 'a', 'c')).toEqual({ problem: expect.stringMatching(/occurs 2 times/) });
    expect(editText('a b a', 'a', 'c', true)).toEqual({ text: 'c b c', replaced: 2 });
    expect(editText('a', 'z', 'c')).toEqual({ problem: expect.stringMatching(/does not occur/) });
    expect(editText('a', '', 'c')).toEqual({ problem: expect.stringMatching(/empty/) });
  });

  it('numbers lines from an offset and says how to read on; reports commands plainly', () => {
    expect(numberedLines('x\ny\nz\n', 2, 1)).toBe('2\ty\n(1 more lines: read on with offset 3)');
    expect(numberedLines('')).toBe('(the file is empty)');
    expect(numberedLines('x\n', 5)).toMatch(/past its end/);
    expect(commandReport({ exitCode: 2, stdout: '', stderr: 'no\n' })).toBe('exit code 2\nstderr:\nno\n');
    expect(commandReport({ exitCode: null, stdout: '', stderr: '', timedOut: true })).toMatch(/timed out/);
  });
});

describe('continue-as-new carries the workspace', () => {
  it('in a run’s carried state and in a conversation’s carry', () => {
    const run = {
      ...startRun({ message: 'x', workspace: true }, []),
      workspace: { ...runWorkspace(true), ref: 'sha256:r' },
    };
    expect(carriedRunState(run).workspace?.ref).toBe('sha256:r');
    const conv = { ...newConversation({ workspace: true }), workspace: 'sha256:c' };
    const carry = carryOver(conv, 'run-1');
    expect(carry.workspace).toBe('sha256:c');
    // The next run of the conversation goes on from it.
    expect(newConversation({ workspace: true, carry }).workspace).toBe('sha256:c');
  });
});

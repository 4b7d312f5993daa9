import { ProtocolError } from '@modelcontextprotocol/server';
import { ExtensionTasks, startedTask, taskPlaceholder } from '../../src/mcp-server/modern/extension-tasks';

const until = async (check: () => boolean) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
};

describe('ExtensionTasks (an application’s MCP tools as tasks of the tasks extension)', () => {
  it('runs the work after the call answered: working, input_required until every input is answered, then completed', async () => {
    const tasks = new ExtensionTasks();
    const created = tasks.start('acme', async (task) => {
      const answers = await task.input({ a: { method: 'elicitation/create' }, b: { method: 'elicitation/create' } });
      return { content: [{ type: 'text', text: JSON.stringify(answers) }] };
    });
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 3_600_000 });
    const id = String(created.taskId);
    await until(() => tasks.get('acme', id)?.status === 'input_required');
    expect(tasks.get('acme', id)).toMatchObject({ status: 'input_required', inputRequests: { a: {}, b: {} } });
    // Answered one at a time: the answered one leaves the requests, the task waits on.
    expect(tasks.update('acme', id, { a: { action: 'accept' } })).toBe(true);
    expect(Object.keys(tasks.get('acme', id)!.inputRequests as object)).toEqual(['b']);
    tasks.update('acme', id, { b: { action: 'decline' } });
    await until(() => tasks.get('acme', id)?.status === 'completed');
    expect(tasks.get('acme', id)).toMatchObject({
      status: 'completed',
      result: { content: [{ text: '{"a":{"action":"accept"},"b":{"action":"decline"}}' }] },
    });
  });

  it('is another tenant’s no task; a failure is failed with its code; a cancelled task stays cancelled', async () => {
    const tasks = new ExtensionTasks();
    const broken = String(
      tasks.start('acme', async () => {
        throw new ProtocolError(-32603, 'broke');
      }).taskId,
    );
    await until(() => tasks.get('acme', broken)?.status === 'failed');
    expect(tasks.get('acme', broken)).toMatchObject({ error: { code: -32603, message: 'broke' } });
    expect(tasks.get('other', broken)).toBeUndefined();
    expect(tasks.cancel('other', broken)).toBe(false);
    let stopped = false;
    const slow = String(
      tasks.start('acme', async (task) => {
        await new Promise<void>((r) => task.signal.addEventListener('abort', () => r()));
        stopped = true;
        return { content: [] };
      }).taskId,
    );
    expect(tasks.cancel('acme', slow)).toBe(true);
    await until(() => stopped);
    expect(tasks.get('acme', slow)).toMatchObject({ status: 'cancelled' });
    // A finished task stays as it ended.
    tasks.cancel('acme', broken);
    expect(tasks.get('acme', broken)?.status).toBe('failed');
    expect(ExtensionTasks.owns(slow)).toBe(true);
    expect(ExtensionTasks.owns('mcp-task-123')).toBe(false);
  });

  it('hands the CreateTaskResult through the SDK’s tool handler as a tool result', () => {
    expect(startedTask(taskPlaceholder({ taskId: 't' }))).toEqual({ taskId: 't' });
    expect(startedTask({ content: [] })).toBeUndefined();
  });
});

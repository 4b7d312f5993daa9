import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Message, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { defineAgent } from '../../src/agents/define-agent';
import { answer, startModel } from '../helpers/scripted-model';
import { eventually } from '../helpers/processes';
import { startHttpApi } from '../helpers/http-api';
import { createTestWorker, useTestTemporal } from '../helpers/temporal';

/** A2A push notifications, delivered by the task's record workflow through a retried activity. */
const temporal = useTestTemporal();

it('delivers a task’s final state to its webhook, retrying while the webhook fails, with the config’s token', async () => {
  // A webhook that is down for its first two deliveries.
  const received: Array<{ token?: string; body: any }> = [];
  let refusals = 2;
  const hook = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (refusals-- > 0) return void res.writeHead(503).end();
      received.push({ token: req.headers['x-a2a-notification-token'] as string | undefined, body: JSON.parse(body) });
      res.writeHead(200).end();
    });
  });
  hook.listen(0, '127.0.0.1');
  await once(hook, 'listening');
  const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/a2a-events`;

  const m = await startModel(() => answer('all done'));
  const t = temporal();
  const agent = defineAgent({ name: 'notifier', instructions: 'Answer.', tools: [] });
  const { worker, taskQueue } = await createTestWorker(t, { baseURL: m.baseURL, agents: [agent] });
  const api = await startHttpApi({ client: t.client, taskQueue });
  try {
    await worker.runUntil(async () => {
      const client = await new ClientFactory().createFromUrl(`${api.base}/a2a/notifier/`);
      expect((await client.getAgentCard()).capabilities?.pushNotifications).toBe(true);
      const message = Message.fromJSON({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'go' }] });
      const task = (await client.sendMessage({
        tenant: '',
        message,
        configuration: {
          acceptedOutputModes: [],
          returnImmediately: false,
          taskPushNotificationConfig: {
            tenant: '',
            id: 'hook-1',
            taskId: '',
            url,
            token: 'secret-42',
            authentication: undefined,
          },
        },
        metadata: undefined,
      })) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(
        await eventually(() => received.some((r) => r.body.task?.status?.state === 'TASK_STATE_COMPLETED'), 30_000),
      ).toBe(true);
      const final = received.find((r) => r.body.task?.status?.state === 'TASK_STATE_COMPLETED')!;
      expect(final.token).toBe('secret-42');
      expect(final.body.task).toMatchObject({ id: task.id, artifacts: [{ artifactId: 'answer' }] });
      expect(refusals).toBeLessThan(0); // the refused deliveries were retried
      // Once the final state is delivered, the ended task still takes push configs (A2A allows
      // them on any task): its record keeps them for an hour, through this server's restarts.
      const record = t.client.workflow.getHandle(`a2a-task-${task.id}`);
      expect((await record.describe()).status.name).toBe('RUNNING');
      const late = await client.createTaskPushNotificationConfig({
        tenant: '',
        id: 'late-1',
        taskId: task.id,
        url: `${url}/late`,
        token: 'late',
        authentication: undefined,
      });
      expect(late).toMatchObject({ id: 'late-1', taskId: task.id });
      const listed = async () =>
        (
          await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 10, pageToken: '' })
        ).configs
          .map((c) => c.id)
          .sort();
      expect(await eventually(async () => (await listed()).includes('late-1'), 10_000)).toBe(true);
      expect(await listed()).toEqual(['hook-1', 'late-1']);
      expect(await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'late-1' })).toMatchObject({
        url: `${url}/late`,
      });
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'late-1' });
      expect(await eventually(async () => !(await listed()).includes('late-1'), 10_000)).toBe(true);
      // Nothing is delivered for the ended task's new config.
      expect(received.filter((r) => r.token === 'late')).toEqual([]);
    });
  } finally {
    api.close();
    hook.close();
  }
}, 90_000);

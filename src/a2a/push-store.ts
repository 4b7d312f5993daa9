import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { PushNotificationStore, ServerCallContext } from '@a2a-js/sdk/server';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  A2A_CONFIG_WINDOW_MS,
  A2A_TASK_WORKFLOW_TYPE,
  a2aTaskPushQuery,
  a2aTaskPushSignal,
} from '../contracts/definitions';
import { taskWorkflowId } from './task-store';

/** The header A2A push notifications carry a config's token in. */
const TOKEN_HEADER = 'X-A2A-Notification-Token';

/**
 * A2A push notification configs, kept with their task in its record workflow (see
 * `a2aTaskWorkflow`): the workflow itself delivers each change of the task to every webhook, by
 * an activity it retries for hours, so a webhook that is down for an hour still gets the final
 * state, and a restart of the A2A server loses no delivery.
 */
export class TemporalPushStore implements PushNotificationStore {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  async save(taskId: string, _context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    const id = config.id || randomUUID();
    const headers: Record<string, string> = {};
    if (config.authentication?.scheme && config.authentication.credentials)
      headers.authorization = `${config.authentication.scheme} ${config.authentication.credentials}`;
    else if (config.token) headers[TOKEN_HEADER] = config.token;
    try {
      await this.client.workflow.signalWithStart(A2A_TASK_WORKFLOW_TYPE, {
        workflowId: taskWorkflowId(taskId),
        taskQueue: this.taskQueue,
        args: [],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        signal: a2aTaskPushSignal,
        signalArgs: [
          {
            set: { id, url: config.url, headers, config: TaskPushNotificationConfig.toJSON({ ...config, id, taskId }) },
          },
        ],
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError)
        throw new UnsupportedOperationError(
          `the task ${taskId} ended more than ${A2A_CONFIG_WINDOW_MS / 60_000} minutes ago: its push notification configs no longer change (there is nothing left to notify)`,
        );
      throw err;
    }
  }

  async load(taskId: string, _context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    try {
      const configs = await this.client.workflow.getHandle(taskWorkflowId(taskId)).query(a2aTaskPushQuery);
      return configs.map((c) => TaskPushNotificationConfig.fromJSON(c as object));
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5) return [];
      throw err;
    }
  }

  async delete(taskId: string, _context: ServerCallContext, configId?: string): Promise<void> {
    try {
      await this.client.workflow
        .getHandle(taskWorkflowId(taskId))
        .signal(a2aTaskPushSignal, { remove: configId ?? '*' });
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5) return;
      throw err;
    }
  }
}

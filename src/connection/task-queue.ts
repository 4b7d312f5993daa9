/** Task queue from `AGENT_TASK_QUEUE`, default `agents`. */
export function defaultTaskQueue(env: NodeJS.ProcessEnv): string {
  return env.AGENT_TASK_QUEUE || 'agents';
}

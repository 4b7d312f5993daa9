import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { GUARDRAIL_ACTIONS } from '../core/guardrails/guardrails';
import type { AgentInput } from '../core/state/run-options';
import type { AgentWorkflowResult } from '../core/state/run-results';
import type { GuardrailCheck, GuardrailVerdict } from '../core/state/guardrail-types';
import { AGENT_WORKFLOW_TYPE } from '../contracts/definitions';
import type { GuardrailCheckInput } from '../contracts/activity-interface';
import { toVerdict, type GuardrailDefinition, type GuardrailRegistry } from '../agents/define-guardrail';
import type { ConversationLoader } from './conversation-loader';
import { createConversationLoader } from './call-model';
import { keepHeartbeating } from './heartbeat';

/** The schema a guardrail agent answers under. */
const AGENT_VERDICT = {
  type: 'object',
  properties: {
    allow: { type: 'boolean' },
    reason: { type: 'string' },
    action: { type: 'string', enum: ['refuse', 'retry', 'approve'] },
  },
  required: ['allow', 'reason'],
  additionalProperties: false,
};

/**
 * Builds the activity that runs guardrails (see `AgentActivities.checkGuardrails`). The message
 * to check is read by reference, as model calls read the conversation, so it never travels in the
 * activity's input; verdicts are small and recorded once.
 */
export function createCheckGuardrails(deps: {
  guardrails: GuardrailRegistry;
  client?: Client;
  conversations?: ConversationLoader;
}) {
  const conversations = deps.conversations ?? createConversationLoader(deps.client);
  return async function checkGuardrails(input: GuardrailCheckInput): Promise<GuardrailCheck[]> {
    const stop = keepHeartbeating();
    try {
      let text: string | undefined;
      if (input.messageIndex !== undefined) {
        const [message] = await conversations.load({
          workflowId: input.workflowId,
          runId: input.runId,
          messageCount: input.messageIndex + 1,
          pinned: 0,
          from: input.messageIndex,
          revision: input.revision,
        });
        text = typeof message?.content === 'string' ? message.content : '';
      }
      const output = input.kind === 'output' && text !== undefined ? parsed(text) : undefined;
      const targets = input.kind === 'tool' ? (input.calls ?? []) : [undefined];
      const checks: GuardrailCheck[] = [];
      for (const name of input.names) {
        const guardrail = deps.guardrails.get(name);
        for (const call of targets) {
          const verdict: GuardrailVerdict = !guardrail
            ? { action: 'refuse', reason: `no guardrail named "${name}" is registered on this worker` }
            : guardrail.check
              ? toVerdict(
                  await guardrail.check({
                    kind: input.kind,
                    workflowId: input.workflowId,
                    ...(input.agent ? { agent: input.agent } : {}),
                    ...(text !== undefined ? { text } : {}),
                    ...(output !== undefined ? { output } : {}),
                    ...(call ? { toolCall: call } : {}),
                  }),
                )
              : await agentVerdict(deps.client ?? Context.current().client, guardrail, input, text, call);
          checks.push({ guardrail: name, kind: input.kind, ...(call ? { callId: call.id } : {}), verdict });
        }
      }
      return checks;
    } finally {
      stop();
    }
  };
}

/** Runs the guardrail's agent on what to check and reads its verdict. */
async function agentVerdict(
  client: Client,
  guardrail: GuardrailDefinition,
  input: GuardrailCheckInput,
  text: string | undefined,
  call: NonNullable<GuardrailCheckInput['calls']>[number] | undefined,
): Promise<GuardrailVerdict> {
  const ctx = Context.current();
  const what =
    input.kind === 'input'
      ? `The user's request:\n${text}`
      : input.kind === 'output'
        ? `The agent's answer:\n${text}`
        : `The tool call: ${call!.name} ${JSON.stringify(call!.arguments)}`;
  const allowed = GUARDRAIL_ACTIONS[input.kind].filter((a) => a !== 'allow') as Exclude<
    GuardrailVerdict['action'],
    'allow'
  >[];
  const message = [
    `Check this ${input.kind === 'tool' ? 'tool call' : input.kind === 'input' ? 'request' : 'answer'}${guardrail.agent && guardrail.instructions ? ` against: ${guardrail.instructions}` : ''}.`,
    what,
    `Answer {"allow": true|false, "reason": "..."}; when not allowed, "action" may be ${allowed.map((a) => `"${a}"`).join(' or ')} (default "refuse").`,
  ].join('\n\n');
  const runInput: AgentInput = {
    agent: guardrail.agent!,
    message,
    tools: [],
    output: AGENT_VERDICT as AgentInput['output'],
    maxIterations: 3,
  };
  // One run per attempt's check: a retried attempt finds the run it started and waits for it.
  const workflowId = `${input.workflowId}-guardrail-${guardrail.name}-${ctx.info.activityId}${call ? `-${call.id}` : ''}`;
  let handle;
  try {
    handle = await client.workflow.start(AGENT_WORKFLOW_TYPE, {
      taskQueue: ctx.info.taskQueue,
      workflowId,
      args: [runInput],
      staticSummary: `guardrail ${guardrail.name} for ${input.workflowId}`,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    handle = client.workflow.getHandle(workflowId);
  }
  const result = (await handle.result()) as AgentWorkflowResult;
  const verdict = result.output as { allow?: unknown; reason?: unknown; action?: unknown } | undefined;
  if (result.status !== 'completed' || typeof verdict?.allow !== 'boolean')
    return {
      action: 'refuse',
      reason: `the guardrail agent "${guardrail.agent}" gave no verdict (${result.status}; see ${workflowId})`,
    };
  if (verdict.allow) return { action: 'allow' };
  const reason = typeof verdict.reason === 'string' && verdict.reason ? verdict.reason : 'not allowed';
  const action = allowed.includes(verdict.action as Exclude<GuardrailVerdict['action'], 'allow'>)
    ? (verdict.action as Exclude<GuardrailVerdict['action'], 'allow'>)
    : 'refuse';
  return { action, reason };
}

function parsed(text: string): unknown {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

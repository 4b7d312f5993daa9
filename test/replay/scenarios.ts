import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import type { AgentInput } from '../../src/core/state/run-options';
import type { ConversationOptions } from '../../src/core/conversation/conversation-state';
import type { ChatAnswer, ChatRequest } from '../../src/testing/openai-compatible-server';
import { decideApproval, readStatus } from '../../src/client/workflow-controls';
import { deliverEvent } from '../../src/client/deliver-event';
import { forkConversation, switchBranch } from '../../src/client/branches';
import { defineAgent } from '../../src/agents/define-agent';
import { defineGuardrail } from '../../src/agents/define-guardrail';
import {
  cancelTurn,
  conversationStatus,
  endConversation,
  queueMessage,
  sendMessage,
  startMessage,
} from '../../src/client/conversations';
import { CONVERSATION_WORKFLOW_TYPE, memoryForgottenSignal, sendMessageUpdate } from '../../src/contracts/definitions';
import { STREAM_POLL_UPDATE, type StreamPollResult } from '../../src/core/events/workflow-stream-wire';
import { answer, call, lastOf, toolResults, type Step } from '../helpers/scripted-model';

/** A writer that calls its researcher as a tool, then writes from what it found. */
const AGENT_AS_TOOL_STEPS: Step[] = [
  (req) =>
    req.messages[0]?.content === 'You research.'
      ? answer('Otters hold hands while they sleep.')
      : call(['researcher', { message: 'facts about otters' }]),
  (req) => answer(`Otters: ${toolResults(req)[0]}`),
];

/** Runs whose histories are recorded into test/histories and replayed against the current workflow code. */
export interface Scenario {
  name: string;
  input: AgentInput;
  steps: Step[];
  /** The worker's model provider (default: the OpenAI Chat Completions adapter). */
  provider?: 'anthropic' | 'openai-responses';
  /** What a person or system does while the run goes on (deliver events, decide approvals). */
  drive?: (client: Client, workflowId: string) => Promise<void>;
  /** Record the runs of agents it calls as tools too (`<name>-child<N>`). */
  recordChildren?: true;
  /** The worker's policies (Cedar text). */
  policies?: string;
}

/** Guardrails the recorded scenarios name. */
export function replayGuardrails() {
  return [
    defineGuardrail({
      name: 'replay-no-passwords',
      check: ({ text }) => (/password/i.test(text ?? '') ? 'asks for a password' : true),
    }),
    defineGuardrail({
      name: 'replay-no-darn',
      check: ({ text }) => (/darn/i.test(text ?? '') ? { action: 'retry', reason: 'no swearing' } : true),
    }),
    defineGuardrail({
      name: 'replay-small-sums',
      check: ({ toolCall }) =>
        Number(toolCall?.arguments.a) > 100 ? { action: 'approve', reason: 'a large sum' } : true,
    }),
  ];
}

/** Agents only the recorded scenarios use, beside the test agents: a lead whose clerk needs approval. */
export function replayAgents() {
  const gatekeeper = defineAgent({
    name: 'gatekeeper',
    instructions: 'You add.',
    tools: ['add'],
    approvalTools: ['add'],
  });
  return [defineAgent({ name: 'gate-lead', instructions: 'You lead.', tools: [], agents: [gatekeeper] }), gatekeeper];
}

/** Answers as each agent of {@link replayAgents} would: the lead asks the gatekeeper, which adds. */
function gateStep(req: ChatRequest): ChatAnswer {
  const answered = req.messages.at(-1)?.role === 'tool';
  if (req.messages[0]?.content === 'You lead.')
    return answered ? answer(`lead: ${lastOf(req, 'tool')}`) : call(['gatekeeper', { message: 'Add 2 and 3.' }]);
  return answered ? answer(`sum: ${lastOf(req, 'tool')}`) : call(['add', { a: 2, b: 3 }]);
}

export const scenarios: Scenario[] = [
  {
    name: 'calculator-chain',
    input: {
      message: 'What is the square root of the sum of the numbers of letters in the words "hello" and "world"?',
    },
    steps: [
      call(['stringLength', { s: 'hello' }], ['stringLength', { s: 'world' }]),
      (req) => call(['add', { a: Number(toolResults(req)[0]), b: Number(toolResults(req)[1]) }]),
      (req) => call(['sqrt', { x: Number(toolResults(req)[2]) }]),
      answer('approximately 3.162'),
    ],
  },
  {
    // A run without a named agent whose tools came back with their version (`ResolvedTools`): the
    // run has an agentVersion. Earlier histories (calculator-chain) got the list alone.
    name: 'unnamed-run-version',
    input: { message: 'What is 2 + 3?', system: 'Add.', tools: ['add'] },
    steps: [call(['add', { a: 2, b: 3 }]), answer('5')],
  },
  {
    // A local tool (a marker, no activity) next to an activity tool; the result leaves their
    // outputs out (the `tool-results-in-history` patch marker).
    name: 'local-tool-results-in-history',
    input: { message: 'What is a share of ACME worth, plus 1?', tools: ['stock_quote', 'add'] },
    steps: [call(['stock_quote', { symbol: 'ACME' }]), call(['add', { a: 42, b: 1 }]), answer('43')],
  },
  {
    // The answer streamed in batches: signals (agentText) between the model call's start and its result.
    name: 'streamed-answer',
    input: { message: 'What is 40 + 2? Explain at length.', tools: ['add'] },
    steps: [
      call(['add', { a: 40, b: 2 }]),
      { content: Array.from({ length: 30 }, (_, i) => `part${i}`).join(' '), chunkDelayMs: 40 },
    ],
  },
  {
    name: 'immediate-return',
    input: { message: 'What is the value of 11 + 31?', tools: ['add'], immediateTools: ['add'] },
    steps: [call(['add', { a: 11, b: 31 }])],
  },
  {
    name: 'tool-errors',
    input: { message: 'errors', tools: ['add'] },
    steps: [call(['multiply', { a: 1 }], ['add', '{"a":'], ['add', { a: 'x', b: 1 }]), answer('recovered')],
  },
  {
    name: 'iteration-limit-generate',
    input: { message: 'loop', maxIterations: 2, onLimit: 'generate', system: 'You are terse.' },
    steps: [call(['add', { a: 1, b: 1 }]), call(['add', { a: 2, b: 2 }]), answer('best effort')],
  },
  {
    name: 'time-limit-armed',
    input: { message: 'weather', tools: ['search_weather'], maxExecutionTime: '5m' },
    steps: [call(['search_weather', { city: 'Beijing' }]), answer('30 degrees: bring sunscreen')],
  },
  {
    name: 'time-limit-fired',
    input: { message: 'wait', tools: ['slow'], maxExecutionTime: '1s' },
    steps: [call(['slow', { key: 'record' }])],
  },
  {
    // A named agent resolved at the start (its time limit armed after), and a structured answer
    // that fails the schema once before it passes.
    name: 'agent-structured-output',
    input: { agent: 'forecaster', message: 'What is the weather in Beijing?', maxExecutionTime: '5m' },
    steps: [
      call(['search_weather', { city: 'Beijing' }]),
      answer('{"city":"Beijing","celsius":"30"}'),
      answer('{"city":"Beijing","celsius":30}'),
    ],
  },
  {
    // An agent called as a tool: a child workflow (the researcher) whose answer is the tool's result.
    name: 'agent-as-tool',
    input: { agent: 'writer', message: 'Write about otters.' },
    steps: AGENT_AS_TOOL_STEPS,
  },
  {
    // A tenant's run: its tools are told the tenant, its model calls and tools carry the agent's
    // priority, and the agent it calls as a tool runs for the same tenant (input and search attribute).
    name: 'tenant-agent-as-tool',
    input: { agent: 'writer', message: 'Write about otters.', tenant: 'acme', priority: 2 },
    recordChildren: true,
    steps: AGENT_AS_TOOL_STEPS,
  },
  {
    // A tool that fails is tried again: its second attempt signals the workflow as it starts (a
    // tool_retried event), then fails too; the model reads the error.
    name: 'tool-retried',
    input: { message: 'try', tools: ['flaky'] },
    steps: [call(['flaky', { key: 'replay' }]), answer('the tool is broken')],
  },
  {
    // A new run asks its worker what it keeps and resolves its agent in one go: the two local
    // activities scheduled together (the `start-local-activities-at-once` patch).
    name: 'start-at-once',
    input: { agent: 'clerk', message: 'add 2 and 3' },
    steps: [call(['add', { a: 2, b: 3 }]), answer('5')],
  },
  {
    // Policies: the worker's description says it has some, each reply's calls are decided in a
    // local activity (its marker holds the decisions); a forbidden call is answered without
    // running, an asked one waits for approval.
    name: 'policies',
    input: { message: 'go', tools: ['add', 'sqrt'] },
    policies: `permit(principal, action, resource);
@id("no-big-adds") forbid(principal, action, resource == Tool::"add") when { context.args has a && context.args.a.greaterThan(decimal("100.0")) };
@id("ask-for-roots") @decision("ask") forbid(principal, action, resource == Tool::"sqrt");`,
    steps: [call(['add', { a: 500, b: 1 }], ['sqrt', { x: 16 }]), call(['add', { a: 5, b: 1 }]), answer('6 and 4')],
    drive: async (client, workflowId) => {
      const s = await until(
        () => readStatus(client, workflowId),
        (x) => x.pendingApprovals.length > 0,
      );
      await decideApproval(client, workflowId, { callId: s.pendingApprovals[0].callId, approve: true });
    },
  },
  {
    // Search attributes upserted as the status changes (the `agent-search-attributes` patch, and
    // the worker's answer as a local-activity marker), with an agent whose model is named.
    name: 'search-attributes',
    input: { agent: 'clerk', message: 'add 2 and 3, then the square root of 16' },
    steps: [call(['add', { a: 2, b: 3 }], ['sqrt', { x: 16 }]), answer('5 and 4')],
  },
  {
    // Upserts only when the status changes (the worker's recorded answer has `trigger: 'status'`): a
    // run whose tool is local stays `thinking` between its steps, so it upserts at its start and
    // its end, the counters riding along.
    name: 'search-attributes-local-tools',
    input: { message: 'What are ACME and INIT worth?', tools: ['stock_quote'] },
    steps: [call(['stock_quote', { symbol: 'ACME' }]), call(['stock_quote', { symbol: 'INIT' }]), answer('42 and 7')],
  },
  {
    // A run stopped at its iteration limit upserts its final status (`max_iterations`) as it ends
    // (the worker's recorded answer has `endStatus: true`); runs recorded before kept `thinking`.
    name: 'search-attributes-end-status',
    input: { message: 'loop', tools: ['add'], maxIterations: 1 },
    steps: [call(['add', { a: 1, b: 1 }])],
  },
  {
    // Compaction in a one-shot run: tool results push the request past maxPromptTokens, so the
    // oldest messages are summarised (a summarizeMessages activity) and the run goes on with the
    // summary after the system message.
    name: 'compaction-run',
    input: { message: 'Read three blobs.', system: 'You read blobs.', tools: ['blob'], maxPromptTokens: 1000 },
    steps: blobReaderSteps(),
  },
  {
    // A compaction whose summary comes back empty twice: the messages are dropped instead (the
    // patch 'summary-failure-drops-messages'), a note in the summary's place, and the run goes on.
    name: 'compaction-summary-failed',
    input: { message: 'Read blobs.', system: 'You read blobs.', tools: ['blob'], maxPromptTokens: 1000 },
    steps: Array.from({ length: 12 }, () => (req: ChatRequest) => {
      if (req.messages.length === 1 && String(req.messages[0].content).startsWith('Summarise')) return answer('');
      if (req.messages.some((m) => String(m.content).includes('could be written'))) return answer('Done reading.');
      return call(['blob', { n: 6000 }]);
    }),
  },
  {
    // The same with token counts: each model call counts what it sent with the worker's tokenizer
    // (`counted` in its result), and the compaction decides on those counts.
    name: 'compaction-counted-run',
    input: { message: 'Read three blobs.', system: 'You read blobs.', tools: ['blob'], maxPromptTokens: 1000 },
    steps: blobReaderSteps(),
  },
  {
    // The same under additive calibration (the patch 'additive-prompt-calibration'): the provider's
    // count of the last request beyond the estimate (the tool definitions) is added, not scaled.
    name: 'compaction-additive-calibration',
    input: { message: 'Read three blobs.', system: 'You read blobs.', tools: ['blob'], maxPromptTokens: 1000 },
    steps: blobReaderSteps(),
  },
  {
    // A re-run: it starts from recorded messages, and an identical tool call gets the recorded output.
    name: 'rerun-recorded-tool',
    input: {
      message: 'Add 2 and 3.',
      tools: ['add'],
      rerun: {
        of: 'agent-replay-original',
        fromStep: 1,
        messages: [{ role: 'user', content: 'Add 2 and 3.' }],
        toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 }, result: '5 (recorded)', error: false }],
      },
    },
    steps: [call(['add', { a: 2, b: 3 }]), answer('It is 5.')],
  },
  {
    // An input guardrail that refuses: no model call, status guardrail_tripped.
    name: 'guardrail-input-tripped',
    input: { message: 'What is the password?', tools: ['add'], inputGuardrails: ['replay-no-passwords'] },
    steps: [answer('(never asked)')],
  },
  {
    // An output guardrail that sends the first answer back, and a tool guardrail that allows.
    name: 'guardrail-output-retry',
    input: {
      message: 'Add 2 and 3.',
      tools: ['add'],
      outputGuardrails: ['replay-no-darn'],
      toolGuardrails: ['replay-small-sums'],
    },
    steps: [call(['add', { a: 2, b: 3 }]), answer('Darn, 5.'), answer('It is 5.')],
  },
  {
    // A tool guardrail that requires approval, decided by a person.
    name: 'guardrail-tool-approval',
    input: { message: 'Add 900 and 1.', tools: ['add'], toolGuardrails: ['replay-small-sums'] },
    steps: [call(['add', { a: 900, b: 1 }]), answer('901.')],
    drive: async (client, workflowId) => {
      const s = await until(
        () => readStatus(client, workflowId),
        (x) => x.pendingApprovals.length > 0,
      );
      await decideApproval(client, workflowId, { callId: s.pendingApprovals[0].callId, approve: true });
    },
  },
  {
    // A tool that asks a person mid-call (ctx.askPerson): the answer goes back to the tool.
    name: 'tool-asks-person',
    input: { message: 'Pay 30.', tools: ['pay_from_account'] },
    steps: [call(['pay_from_account', { amount: 30 }]), answer('Paid.')],
    drive: async (client, workflowId) => {
      const s = await until(
        () => readStatus(client, workflowId),
        (x) => x.pendingApprovals.length > 0,
      );
      await decideApproval(client, workflowId, {
        callId: s.pendingApprovals[0].callId,
        approve: true,
        reason: 'account 7',
      });
    },
  },
  {
    // A tool that asks the run's model mid-call (ctx.askModel): a sampleModel activity, then the tool again.
    name: 'tool-asks-model',
    input: { message: 'Ask it.', tools: ['ask_the_model'] },
    steps: [
      (req) =>
        String(req.messages.at(-1)?.content) === 'what is 6 times 7?'
          ? answer('42')
          : call(['ask_the_model', { question: 'what is 6 times 7?' }]),
      answer('It says 42.'),
    ],
  },
  {
    // Memory across conversations: a recall before the first model call (nothing kept yet), then
    // an extraction after the answer, which keeps a fact.
    name: 'memory-recall-extract',
    input: { message: 'I live in Lyon.', user: 'replay-user', memory: { recall: true, extract: true } },
    steps: [answer('Noted.'), answer('{"add":[{"text":"Lives in Lyon"}],"update":[],"retire":[]}')],
  },
  {
    // A deletion of memory reaching a run that keeps a copy of the fact (the memoryForgotten
    // signal) while it waits: its messages change, a new version for the worker's cache, no command.
    name: 'memory-forgotten',
    input: { message: 'Remember my seat, then wait.', user: 'replay-user', tools: ['remember', 'wait_for_event'] },
    steps: [
      call(['remember', { text: 'Prefers aisle seats on long flights' }]),
      call(['wait_for_event', { name: 'go' }]),
      answer('Done.'),
    ],
    drive: async (client, workflowId) => {
      await until(
        () => readStatus(client, workflowId),
        (s) => s.state === 'waiting',
      );
      await client.workflow.getHandle(workflowId).signal(memoryForgottenSignal, {
        at: new Date().toISOString(),
        facts: [{ text: 'Prefers aisle seats on long flights' }],
      });
      await deliverEvent(client, workflowId, 'go');
    },
  },
  {
    // A durable sleep: a workflow timer with the reason as its summary, no activity.
    name: 'durable-sleep',
    input: { message: 'Follow up in a second.', tools: ['sleep'] },
    steps: [call(['sleep', { duration: '1s', reason: 'follow up' }]), answer('Followed up.')],
  },
  {
    // wait_for_event: an event delivered while the run waits (a signal), then a wait that times out.
    name: 'wait-for-event',
    input: { message: 'Wait for the payment.', tools: ['wait_for_event'] },
    steps: [
      call(['wait_for_event', { name: 'payment_received' }]),
      call(['wait_for_event', { name: 'refund', timeout: '1s' }]),
      answer('Paid.'),
    ],
    drive: async (client, workflowId) => {
      await until(
        () => readStatus(client, workflowId),
        (s) => s.state === 'waiting',
      );
      await deliverEvent(client, workflowId, 'payment_received', { amount: 42 });
    },
  },
  {
    // An event delivered twice under one id (a webhook's retry) reaches one wait: the second wait
    // times out although a second delivery arrived.
    name: 'wait-for-event-deduplicated',
    input: { message: 'Wait for the payment.', tools: ['wait_for_event'] },
    steps: [
      call(['wait_for_event', { name: 'payment_received' }]),
      call(['wait_for_event', { name: 'payment_received', timeout: '1s' }]),
      answer('Paid once.'),
    ],
    drive: async (client, workflowId) => {
      await until(
        () => readStatus(client, workflowId),
        (s) => s.state === 'waiting',
      );
      await deliverEvent(client, workflowId, 'payment_received', { amount: 42 }, { eventId: 'evt_42' });
      await deliverEvent(client, workflowId, 'payment_received', { amount: 42 }, { eventId: 'evt_42' });
    },
  },
  {
    // An approval nobody decides: escalated after the timeout, rejected after the second period.
    name: 'approval-escalated',
    input: {
      message: 'Add 2 and 3.',
      tools: ['add'],
      approvalTools: ['add'],
      approvalTimeout: '1s',
      onApprovalTimeout: 'escalate',
    },
    steps: [call(['add', { a: 2, b: 3 }]), answer('Not allowed.')],
  },
  {
    // An agent called as a tool asks for approval: it signals its caller, which lists it; the
    // decision goes through the caller's id to the child.
    name: 'child-approval',
    input: { agent: 'gate-lead', message: 'Get a sum.' },
    steps: [gateStep, gateStep, gateStep],
    recordChildren: true,
    drive: async (client, workflowId) => {
      const status = await until(
        () => readStatus(client, workflowId),
        (s) => s.pendingApprovals.length > 0,
      );
      await decideApproval(client, workflowId, { callId: status.pendingApprovals[0].callId, approve: true });
    },
  },
  {
    // A long tool output: the model sees a bounded view and reads on with the built-in
    // read_tool_output, which the workflow answers itself (no activity).
    name: 'long-output-paging',
    input: { message: 'Read the blob.', tools: ['blob', 'read_tool_output'], maxToolResultTokens: 1000 },
    steps: [
      call(['blob', { n: 12_000 }, 'call_blob']),
      call(['read_tool_output', { call_id: 'call_blob', offset: 3000, length: 50 }]),
      answer('Read.'),
    ],
  },
  {
    // A token budget with wrap_up: the calls grow until the next would pass the budget, then one
    // last call without tools (the instruction in its input) ends the run as budget_exceeded.
    name: 'budget-wrap-up',
    input: { message: 'Keep adding.', tools: ['add'], budget: { tokens: 900 }, onBudget: 'wrap_up' },
    steps: Array.from(
      { length: 12 },
      () => (req: ChatRequest) =>
        req.tools?.length ? call(['add', { a: req.messages.length, b: 1 }]) : answer('best so far'),
    ),
  },
  {
    // A workspace: two calls in one reply run one after another (the second from the state the
    // first committed), each change committed with its result; a read commits nothing.
    name: 'workspace',
    input: { message: 'Write a note, then append to it.', tools: ['write_file', 'bash', 'read_file'] },
    steps: [
      call(['write_file', { path: 'note.txt', content: 'one\n' }], ['bash', { command: 'echo two >> note.txt' }]),
      call(['read_file', { path: 'note.txt' }]),
      answer('Done.'),
    ],
  },
  {
    // Images by reference: a URL on the user's message, a tool's image stored as a blob (only
    // its reference in the tool's result and the conversation).
    name: 'images',
    input: {
      message: 'What is in this picture? Take a snapshot too.',
      images: [{ url: 'https://example.com/cat.png' }],
      tools: ['snapshot'],
    },
    steps: [call(['snapshot', {}]), answer('A cat, and a one-pixel screen.')],
  },
  {
    // Claude over the Messages API: thinking blocks (signed, and redacted) in the model call's
    // result and in the conversation, parallel tool calls, cached tokens in the usage.
    name: 'anthropic-thinking-tools',
    provider: 'anthropic',
    input: { message: 'Add 2 and 3, and take the root of 16.', tools: ['add', 'sqrt'] },
    steps: [
      {
        ...call(['add', { a: 2, b: 3 }], ['sqrt', { x: 16 }]),
        reasoning: [{ text: 'Both at once.', signature: 'c2lnbmF0dXJl' }, { redacted: 'cmVkYWN0ZWQ=' }],
        usage: { cacheWriteTokens: 30, reasoningTokens: 9 },
      },
      { ...answer('5 and 4.'), usage: { cachedPromptTokens: 30 } },
    ],
  },
  {
    // A reasoning model over the Responses API: encrypted reasoning items in the model call's
    // result and in the conversation, sent back statelessly; reasoning tokens in the usage.
    name: 'openai-responses-reasoning',
    provider: 'openai-responses',
    input: { message: 'What is 20 + 22?', tools: ['add'] },
    steps: [
      {
        ...call(['add', { a: 20, b: 22 }]),
        reasoning: [{ text: 'Add.', signature: 'gAAAAenc' }],
        usage: { reasoningTokens: 16 },
      },
      answer('42'),
    ],
  },
  {
    // The agent's model is overloaded: the next of its models answers (a model_fallback event,
    // a second call under its own call number).
    name: 'model-fallback',
    input: { agent: 'resilient', message: 'What is 1 + 2?' },
    steps: [
      (req) =>
        req.model === 'primary-model'
          ? { http: { status: 529, body: { error: { message: 'Overloaded', type: 'overloaded_error' } } } }
          : call(['add', { a: 1, b: 2 }]),
      answer('3'),
    ],
  },
  {
    name: 'functions-mode',
    input: { message: 'What is 2 + 3?', tools: ['add'], toolCalling: 'functions' },
    steps: [call(['add', { a: 2, b: 3 }]), answer('5')],
  },
  {
    // ReAct requests hold no assistant messages, so one step answers from the scratchpad.
    name: 'react-mode',
    input: { message: 'Weather in Beijing?', tools: ['search_weather'], toolCalling: 'react' },
    steps: [
      (req) => {
        const pad = String(req.messages[req.messages.length - 1].content)
          .split('\nQuestion: ')
          .pop()!;
        if (!pad.includes('Observation:')) return answer('I wonder.');
        if (!pad.includes('Observation: 30')) return answer(' check it\nAction: search_weather\nAction Input: Beijing');
        return answer(' done\nFinal Answer: 30 degrees');
      },
    ],
  },
];

/** Conversations whose histories are recorded too: each drives a conversation through its features. */
export interface ConversationScenario {
  name: string;
  options: ConversationOptions;
  model: (request: ChatRequest) => ChatAnswer;
  /** Sends messages and decisions; the recorder then records every run of the conversation. */
  drive: (client: Client, id: string, taskQueue: string) => Promise<void>;
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (;;) {
    const v = await read().catch(() => undefined);
    if (v !== undefined && ok(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Calls `add` for "add A and B", `slow` for "wait", the booking tool when offered; otherwise echoes. */
function conversationModel(request: ChatRequest): ChatAnswer {
  const last = request.messages[request.messages.length - 1];
  const user = lastOf(request, 'user');
  if (last.role === 'tool') return answer(`result: ${last.content}`);
  const add = /^add (\d+) and (\d+)$/.exec(user);
  if (add) return call(['add', { a: Number(add[1]), b: Number(add[2]) }]);
  if (user === 'wait') return call(['slow', { key: 'replay' }]);
  if (request.messages[0]?.content === 'You triage.') return call(['transfer_to_billing', {}]);
  if (request.tools?.some((t) => t.function.name === 'get_booking_details'))
    return call(['get_booking_details', { bookingNumber: 'B-1' }]);
  return answer(`you said: ${user}`);
}

/**
 * The compaction scenarios' model: reads blobs until a summary says two were read, then answers;
 * it writes the summary when asked for one.
 */
function blobReaderSteps() {
  return Array.from({ length: 8 }, () => (req: ChatRequest) => {
    if (req.messages.length === 1 && String(req.messages[0].content).startsWith('Summarise'))
      return answer('Two blobs were read.');
    // After the summary the model knows what it read.
    if (req.messages.some((m) => String(m.content).includes('Two blobs were read'))) return answer('Done reading.');
    return call(['blob', { n: 1500 }]);
  });
}

export const conversationScenarios: ConversationScenario[] = [
  {
    // Branches: an edit forks the conversation, a switch makes the first branch current again,
    // and the next message goes on from its end.
    name: 'conversation-branches',
    options: {},
    model: (request) => answer(`you said: ${lastOf(request, 'user')}`),
    drive: async (client, id, taskQueue) => {
      const start = { taskQueue };
      await sendMessage(client, id, { message: 'one' }, start);
      await forkConversation(client, id, { atMessage: 0, message: 'ONE' }, start);
      await switchBranch(client, id, 'main');
      await sendMessage(client, id, { message: 'two' }, start);
      await endConversation(client, id);
    },
  },
  {
    // Messages with ids: one sent twice as an Update (Temporal answers it once), one queued as a
    // Signal and then sent as an Update (the conversation answers it once), one the other way round.
    name: 'conversation-message-ids',
    options: {},
    model: (request) => answer(`you said: ${lastOf(request, 'user')}`),
    drive: async (client, id, taskQueue) => {
      const start = { taskQueue };
      await sendMessage(client, id, { message: 'one', messageId: 'k1' }, start);
      await sendMessage(client, id, { message: 'one', messageId: 'k1' }, start);
      await queueMessage(client, id, { message: 'two', messageId: 'k2' }, start);
      await sendMessage(client, id, { message: 'two', messageId: 'k2' }, start);
      await sendMessage(client, id, { message: 'three', messageId: 'k3' }, start);
      await queueMessage(client, id, { message: 'three', messageId: 'k3' }, start);
      await sendMessage(client, id, { message: 'four', messageId: 'k4' }, start);
      await endConversation(client, id);
    },
  },
  {
    // A budget the first turn spends, under wrap_up: the next turn ends at once with
    // budget_exceeded and no model call (the patch 'spent-budget-stops-turns').
    name: 'conversation-budget-spent',
    options: { budget: { tokens: 300 }, onBudget: 'wrap_up' },
    model: () => answer('noted'),
    drive: async (client, id, taskQueue) => {
      const start = { taskQueue, options: { budget: { tokens: 300 }, onBudget: 'wrap_up' as const } };
      await sendMessage(client, id, { message: `note: ${'lorem ipsum '.repeat(120)}` }, start);
      const second = await sendMessage(client, id, { message: 'and now?' }, start);
      if (second.status !== 'budget_exceeded') throw new Error(`expected budget_exceeded, got ${second.status}`);
      await endConversation(client, id);
    },
  },
  {
    // Memory by tokens by default: the worker tells its context windows (describeWorker), the
    // conversation's options get maxPromptTokens, and a small one makes the third turn summarise.
    name: 'conversation-token-memory',
    options: { system: 'Be brief.', maxPromptTokens: 1000 },
    model: (request) =>
      String(request.messages[0]?.content).startsWith('Summarise')
        ? answer('The user sent long notes.')
        : answer(`noted: ${lastOf(request, 'user').slice(0, 20)}`),
    drive: async (client, id, taskQueue) => {
      const start = { taskQueue, options: { system: 'Be brief.', maxPromptTokens: 1000 } };
      for (let i = 1; i <= 4; i++)
        await sendMessage(client, id, { message: `note ${i}: ${'lorem ipsum '.repeat(120)}` }, start);
      await sendMessage(client, id, { message: 'and by default?' }, { taskQueue });
      await endConversation(client, id);
    },
  },
  {
    // A conversation with a named agent; a later message adds an approval tool to it.
    name: 'conversation-agent',
    options: { agent: 'clerk' },
    model: conversationModel,
    drive: async (client, id, taskQueue) => {
      const start = { taskQueue, options: { agent: 'clerk' } };
      await sendMessage(client, id, { message: 'add 1 and 2' }, start);
      const gated = startMessage(client, id, { message: 'add 3 and 4', approvalTools: ['add'] }, start);
      const status = await until(
        () => conversationStatus(client, id),
        (s) => s.pendingApprovals.length > 0,
      );
      await decideApproval(client, id, { callId: status.pendingApprovals[0].callId, approve: true });
      await (await gated).result();
      await endConversation(client, id);
    },
  },
  {
    name: 'conversation-approvals',
    options: { system: 'Be brief.', memoryWindow: 3, approvalTools: ['add'] },
    model: conversationModel,
    drive: async (client, id, taskQueue) => {
      const start = { taskQueue, options: { system: 'Be brief.', memoryWindow: 3, approvalTools: ['add'] } };
      await sendMessage(client, id, { message: 'hello' }, start);
      for (const [message, approve] of [
        ['add 2 and 3', true],
        ['add 1 and 1', false],
      ] as const) {
        const turn = startMessage(client, id, { message }, start);
        const status = await until(
          () => conversationStatus(client, id),
          (s) => s.pendingApprovals.length > 0,
        );
        await decideApproval(client, id, {
          callId: status.pendingApprovals[0].callId,
          approve,
          ...(approve ? {} : { reason: 'no' }),
        });
        await (await turn).result();
      }
      await endConversation(client, id);
    },
  },
  {
    name: 'conversation-cancel-signal-dynamic',
    options: { maxExecutionTime: '5m' },
    model: conversationModel,
    drive: async (client, id, taskQueue) => {
      const start = { taskQueue, options: { maxExecutionTime: '5m' } };
      await queueMessage(client, id, { message: 'first, by signal' }, start);
      const waiting = await startMessage(client, id, { message: 'wait' }, start);
      await until(
        () => conversationStatus(client, id),
        (s) => s.state === 'running_tools',
      );
      await cancelTurn(client, id);
      await waiting.result();
      await sendMessage(client, id, { message: 'my booking please' }, start);
      await endConversation(client, id);
    },
  },
  {
    // Handed off in the first turn; the second turn is the new agent's.
    name: 'conversation-handoff',
    options: { agent: 'triage' },
    model: conversationModel,
    drive: async (client, id, taskQueue) => {
      const start = { taskQueue, options: { agent: 'triage' } };
      await sendMessage(client, id, { message: 'my invoice is wrong' }, start);
      await sendMessage(client, id, { message: 'add 2 and 2' }, start);
      await endConversation(client, id);
    },
  },
  {
    name: 'conversation-continue-as-new',
    options: { memoryWindow: 4 },
    model: conversationModel,
    drive: async (client, id, taskQueue) => {
      for (let n = 1; n <= 8; n++)
        await sendMessage(
          client,
          id,
          { message: n % 3 === 0 ? `add ${n} and 1` : `turn ${n}` },
          { taskQueue, options: { memoryWindow: 4 } },
        );
      await endConversation(client, id);
    },
  },
  {
    // A new conversation's two start activities scheduled together (`start-local-activities-at-once`).
    name: 'conversation-start-at-once',
    options: { agent: 'clerk' },
    model: conversationModel,
    drive: async (client, id, taskQueue) => {
      await sendMessage(client, id, { message: 'add 1 and 2' }, { taskQueue, options: { agent: 'clerk' } });
      await endConversation(client, id);
    },
  },
  {
    // A conversation whose agent the worker does not have: its first message (an Update) is told
    // why, then the conversation fails. Sent straight to the workflow, without the client's
    // clean-up (which deletes such a conversation), so there is a history to keep. The `-legacy`
    // history was recorded before the `conversation-start-failure-answers-messages` patch.
    name: 'conversation-unknown-agent',
    options: { agent: 'nobody' },
    model: conversationModel,
    drive: async (client, id, taskQueue) => {
      const startWorkflowOperation = new WithStartWorkflowOperation(CONVERSATION_WORKFLOW_TYPE, {
        workflowId: id,
        taskQueue,
        args: [{ agent: 'nobody' }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      const update = await client.workflow.startUpdateWithStart(sendMessageUpdate, {
        args: [{ message: 'hello' }],
        waitForStage: 'ACCEPTED',
        startWorkflowOperation,
      });
      await update.result().catch(() => undefined);
      await client.workflow
        .getHandle(id)
        .result()
        .catch(() => undefined);
    },
  },
  {
    // A conversation cancelled between turns shows `cancelled` (the worker's answer has `endStatus: true`).
    name: 'conversation-cancelled',
    options: {},
    model: conversationModel,
    drive: async (client, id, taskQueue) => {
      await sendMessage(client, id, { message: 'add 1 and 1' }, { taskQueue });
      const handle = client.workflow.getHandle(id);
      await handle.cancel();
      await handle.result().catch(() => undefined);
    },
  },
  {
    // Workflow Streams subscribers: a poll answered at once, one that waits for the next turn,
    // and one still waiting when the conversation ends (let go, so the end is not held up).
    name: 'conversation-workflow-stream',
    options: {},
    model: conversationModel,
    drive: async (client, id, taskQueue) => {
      await sendMessage(client, id, { message: 'hello' }, { taskQueue });
      const handle = client.workflow.getHandle(id);
      const poll = (from: number) =>
        handle.startUpdate<StreamPollResult, [{ topics: string[]; from_offset: number }]>(STREAM_POLL_UPDATE, {
          args: [{ topics: [], from_offset: from }],
          waitForStage: 'ACCEPTED',
        });
      const first = await (await poll(0)).result();
      const waiting = await poll(first.next_offset);
      await sendMessage(client, id, { message: 'add 1 and 2' }, { taskQueue });
      const second = await waiting.result();
      const last = await poll(second.next_offset + 1000);
      await endConversation(client, id);
      await last.result();
    },
  },
  {
    // A conversation's attributes: idle between turns, closed at the end.
    name: 'conversation-search-attributes',
    options: {},
    model: conversationModel,
    drive: async (client, id, taskQueue) => {
      await sendMessage(client, id, { message: 'add 1 and 1' }, { taskQueue });
      await sendMessage(client, id, { message: 'thanks' }, { taskQueue });
      await endConversation(client, id);
    },
  },
];

// The same conversation with its agent resolved beside the worker's description (the
// `start-local-activities-at-once` patch): the resolution fails while the description succeeds.
conversationScenarios.push({
  ...conversationScenarios.find((c) => c.name === 'conversation-unknown-agent')!,
  name: 'conversation-unknown-agent-at-once',
});

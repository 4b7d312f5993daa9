import { parseArgs, type ParseArgsConfig } from 'node:util';

type ParsedResults<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;
import { agentNameProblem } from '../core/state/agents';
import { DURATION_UNITS, parseDuration } from '../core/time/duration';
import { priorityKeyProblem, tenantProblem } from '../core/fleet/tenants';
import { userProblem } from '../core/facts/memory-scope';
import { MIN_PROMPT_TOKENS } from '../core/context/compaction';
import { TOOL_CALLING_MODES } from '../core/run/run-input';
import type { AgentInput, ToolCallingMode } from '../core/state/run-options';

/** A mistake on the command line; reported with usage, exit code 2, before anything starts. */
export class UsageError extends Error {}

type Flags = NonNullable<ParseArgsConfig['options']>;

/** Flags for the options a run and a conversation share. */
export const RUN_OPTION_FLAGS = {
  agent: { type: 'string' },
  tenant: { type: 'string' },
  user: { type: 'string' },
  priority: { type: 'string' },
  model: { type: 'string' },
  tools: { type: 'string' },
  immediate: { type: 'string' },
  'needs-approval': { type: 'string' },
  'approval-timeout': { type: 'string' },
  'max-iterations': { type: 'string' },
  'max-time': { type: 'string' },
  'model-timeout': { type: 'string' },
  'on-limit': { type: 'string' },
  system: { type: 'string' },
  'tool-calling': { type: 'string' },
  'no-stream': { type: 'boolean' },
  'budget-tokens': { type: 'string' },
  'budget-usd': { type: 'string' },
  'on-budget': { type: 'string' },
  'max-tool-result-tokens': { type: 'string' },
  'max-prompt-tokens': { type: 'string' },
  'summary-model': { type: 'string' },
  'on-approval-timeout': { type: 'string' },
  'max-wait': { type: 'string' },
  'waits-count': { type: 'boolean' },
  workspace: { type: 'boolean' },
} as const satisfies Flags;

/** `--image`, repeatable: an image file or URL sent with the message (`run`, `send`). */
export const IMAGE_FLAG = { image: { type: 'string', multiple: true } } as const satisfies Flags;

/** The `--help` line of `--image`. */
export const IMAGE_HELP = `  --image FILE|URL       an image sent with the message (PNG, JPEG, GIF, WebP; repeat for more); files
                         are stored in the blob store (AGENT_BLOB_DIR), which the worker must share`;

/** The `--help` lines of the run options. */
export const RUN_OPTION_HELP = `  --agent NAME           a named agent of the worker (see the agents command); the options below override it
  --tenant NAME          the customer it works for: its runs' AgentTenant, fair share, budget and logins
  --user ID              the person it works for: whose memory remember, recall and forget reach
  --priority N           1 (first) to 5 (last) when the task queue backs up (default 3)
  --model NAME           the model: a named model of the worker, or a provider-prefixed name
                         (anthropic:claude-sonnet-5); default: the agent's, else the worker's AGENT_MODEL
  --tools a,b            tools (default: the agent's, else all registered); the workspace tools
                         (bash, read_file, write_file, edit_file, list_files, grep) give the run a workspace
  --workspace            a workspace for the run: a directory where bash runs commands in a sandbox and
                         the file tools work, saved after each change (with the workspace tools)
  --immediate a          tools that end the run right after they execute
  --needs-approval a     tools whose calls wait for approve/reject
  --approval-timeout 1h  how long a pending approval waits for a decision (default: forever)
  --on-approval-timeout MODE  then: reject (default), approve, or escalate (status escalated, and
                         the approval waits one more period before it counts as rejected)
  --max-iterations N     maximum LLM calls (default 15)
  --max-time 30s         wall-clock limit of the run (of each turn, in conversations)
  --model-timeout 5m     longest one model call may take with all its retries (default 5m)
  --on-limit MODE        at the iteration limit: stop (default) or generate a last answer
  --system "..."         system message
  --tool-calling MODE    tools (default), functions (legacy function_call API) or react (ReAct text prompt)
  --no-stream            model calls do not stream their text (it then arrives in one piece per call)
  --max-prompt-tokens N  the most tokens a request may hold: older messages are summarised to stay
                         under it (conversations then use no message window)
  --summary-model NAME   the model that writes those summaries (e.g. a cheaper named model)
  --max-tool-result-tokens N  the most of one tool output the model sees (default 8000; longer ones are
                         cut to their head and tail; name read_tool_output in --tools to let it read on)
  --budget-tokens N      the most tokens the run may spend (a conversation: all its turns; agents it calls count)
  --budget-usd X         the most dollars it may spend, by the worker's price table
  --on-budget MODE       when the next model call would pass the budget: stop (default: status
                         budget_exceeded) or wrap_up (one last call without tools for the best answer)
  --max-wait 30d         the longest one sleep or wait_for_event may last (default 30d)
  --waits-count          time spent in sleep and wait_for_event counts toward --max-time
                         (by default the clock of --max-time stops while the agent waits)
  Durations are a number with a unit: ${DURATION_UNITS.join(', ')} (e.g. 500ms, 30s, 1.5m, 2h, 1d).`;

/** Flags whose options only apply when a conversation starts, by option key (for warnings on open conversations). */
export const START_ONLY_FLAGS: Record<string, string> = {
  agent: '--agent',
  tenant: '--tenant',
  user: '--user',
  priority: '--priority',
  modelSettings: '--model',
  system: '--system',
  immediateTools: '--immediate',
  approvalTimeout: '--approval-timeout',
  maxIterations: '--max-iterations',
  maxExecutionTime: '--max-time',
  modelCallTimeout: '--model-timeout',
  onLimit: '--on-limit',
  onApprovalTimeout: '--on-approval-timeout',
  maxWait: '--max-wait',
  waitsCountTowardTimeLimit: '--waits-count',
  toolCalling: '--tool-calling',
  memoryWindow: '--memory',
  budget: '--budget-tokens/--budget-usd',
  onBudget: '--on-budget',
  maxToolResultTokens: '--max-tool-result-tokens',
  maxPromptTokens: '--max-prompt-tokens',
  summaryModel: '--summary-model',
  idleTimeout: '--idle-timeout',
  workspace: '--workspace',
};

/** Parses `argv` strictly: an unknown flag is a {@link UsageError}, never ignored. */
export function parseFlags<F extends Flags>(
  argv: string[],
  flags: F,
): ParsedResults<{ args: string[]; allowPositionals: true; strict: true; options: F }> {
  try {
    return parseArgs({ args: argv, allowPositionals: true, strict: true, options: flags });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * The run options named by {@link RUN_OPTION_FLAGS}, every value checked. Tool names are checked
 * against `registeredTools` when the tools are known here (a worker in this process).
 */
export function runOptionsFromFlags(
  values: Record<string, string | string[] | boolean | undefined>,
  registeredTools: readonly string[] | undefined,
): Omit<AgentInput, 'message'> {
  const str = (k: string) => values[k] as string | undefined;
  const options: Omit<AgentInput, 'message'> = {};
  whoFlags(str, options);
  toolFlags(str, options, registeredTools);
  if (values.workspace === true) options.workspace = true;
  limitFlags(str, values, options);
  budgetFlags(str, options);
  return options;
}

/** A flag's value as a string (undefined when not given). */
type FlagValue = (flag: string) => string | undefined;

/** Who runs and how: --agent, --tenant, --user, --priority, --model, --system. */
function whoFlags(str: FlagValue, options: Omit<AgentInput, 'message'>): void {
  if (str('agent') !== undefined) {
    const problem = agentNameProblem(str('agent'));
    if (problem) throw new UsageError(problem.replace('"agent"', '--agent'));
    options.agent = str('agent');
  }
  if (str('tenant') !== undefined) {
    const problem = tenantProblem(str('tenant'), '--tenant');
    if (problem) throw new UsageError(problem);
    options.tenant = str('tenant');
  }
  if (str('user') !== undefined) {
    const problem = userProblem(str('user'), '--user');
    if (problem) throw new UsageError(problem);
    options.user = str('user');
  }
  if (str('priority') !== undefined) {
    const priority = Number(str('priority'));
    const problem = priorityKeyProblem(/^\d+$/.test(str('priority')!) ? priority : str('priority'));
    if (problem) throw new UsageError(problem.replace('"priority"', '--priority'));
    options.priority = priority;
  }
  if (str('model') !== undefined) {
    if (!str('model')!.trim()) throw new UsageError('--model needs a model name, e.g. --model smart');
    options.modelSettings = { model: str('model')!.trim() };
  }
  if (str('system') !== undefined) options.system = str('system');
}

/** The tools: --tools, --immediate, --needs-approval (the last two within --tools). */
function toolFlags(
  str: FlagValue,
  options: Omit<AgentInput, 'message'>,
  registeredTools: readonly string[] | undefined,
): void {
  if (str('tools') !== undefined) options.tools = toolList('--tools', str('tools')!, registeredTools);
  for (const [flag, key] of [
    ['immediate', 'immediateTools'],
    ['needs-approval', 'approvalTools'],
  ] as const) {
    if (str(flag) === undefined) continue;
    const names = toolList(`--${flag}`, str(flag)!, registeredTools);
    const outside = options.tools ? names.filter((t) => !options.tools!.includes(t)) : [];
    if (outside.length) throw new UsageError(`--${flag} names tools missing from --tools: ${outside.join(', ')}`);
    options[key] = names;
  }
}

/** The limits: iterations, times, approvals, waits, the model call, tool calling, the prompt. */
function limitFlags(
  str: FlagValue,
  values: Record<string, string | string[] | boolean | undefined>,
  options: Omit<AgentInput, 'message'>,
): void {
  if (str('max-iterations') !== undefined)
    options.maxIterations = wholeNumber('--max-iterations', str('max-iterations')!, 1);
  if (str('max-time') !== undefined) options.maxExecutionTime = duration('--max-time', str('max-time')!);
  if (str('approval-timeout') !== undefined)
    options.approvalTimeout = duration('--approval-timeout', str('approval-timeout')!);
  if (str('on-approval-timeout') !== undefined) {
    const mode = str('on-approval-timeout');
    if (mode !== 'reject' && mode !== 'approve' && mode !== 'escalate')
      throw new UsageError(`--on-approval-timeout must be "reject", "approve" or "escalate", got "${mode}"`);
    if (options.approvalTimeout === undefined)
      throw new UsageError('--on-approval-timeout needs --approval-timeout (how long an approval waits)');
    options.onApprovalTimeout = mode;
  }
  if (str('max-wait') !== undefined) options.maxWait = duration('--max-wait', str('max-wait')!);
  if (values['waits-count'] === true) options.waitsCountTowardTimeLimit = true;
  if (str('model-timeout') !== undefined) options.modelCallTimeout = duration('--model-timeout', str('model-timeout')!);
  if (str('on-limit') !== undefined) {
    const mode = str('on-limit');
    if (mode !== 'stop' && mode !== 'generate')
      throw new UsageError(`--on-limit must be "stop" or "generate", got "${mode}"`);
    options.onLimit = mode;
  }
  if (str('tool-calling') !== undefined) {
    const mode = str('tool-calling') as ToolCallingMode;
    if (!TOOL_CALLING_MODES.includes(mode))
      throw new UsageError(`--tool-calling must be one of ${TOOL_CALLING_MODES.join(', ')}, got "${mode}"`);
    options.toolCalling = mode;
  }
  if (values['no-stream'] === true) options.stream = false;
  if (str('max-prompt-tokens') !== undefined)
    options.maxPromptTokens = wholeNumber('--max-prompt-tokens', str('max-prompt-tokens')!, MIN_PROMPT_TOKENS);
  if (str('summary-model') !== undefined) {
    if (!str('summary-model')!.trim()) throw new UsageError('--summary-model needs a model name');
    options.summaryModel = str('summary-model')!.trim();
  }
  if (str('max-tool-result-tokens') !== undefined)
    options.maxToolResultTokens = wholeNumber('--max-tool-result-tokens', str('max-tool-result-tokens')!, 100);
}

/** The budget: --budget-tokens, --budget-usd, --on-budget. */
function budgetFlags(str: FlagValue, options: Omit<AgentInput, 'message'>): void {
  const budget: NonNullable<AgentInput['budget']> = {};
  if (str('budget-tokens') !== undefined) budget.tokens = wholeNumber('--budget-tokens', str('budget-tokens')!, 1);
  if (str('budget-usd') !== undefined) {
    const raw = str('budget-usd')!;
    if (!/^\d+(\.\d+)?$/.test(raw) || Number(raw) <= 0)
      throw new UsageError(`--budget-usd must be a number of dollars > 0 (e.g. 0.50), got "${raw}"`);
    budget.costUsd = Number(raw);
  }
  if (Object.keys(budget).length) options.budget = budget;
  if (str('on-budget') !== undefined) {
    const mode = str('on-budget');
    if (mode !== 'stop' && mode !== 'wrap_up')
      throw new UsageError(`--on-budget must be "stop" or "wrap_up", got "${mode}"`);
    if (!options.budget) throw new UsageError('--on-budget needs a budget: --budget-tokens or --budget-usd');
    options.onBudget = mode;
  }
}

/** A flag that must be a whole number of at least `min`. */
export function wholeNumber(flag: string, raw: string, min: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min)
    throw new UsageError(`${flag} must be a whole number >= ${min}, got "${raw}"`);
  return Number(raw);
}

/** Checks a duration flag; the value stays a string (it is recorded in history as written). */
export function duration(flag: string, raw: string): string {
  durationMs(flag, raw);
  return raw;
}

/** A duration flag in milliseconds. */
export function durationMs(flag: string, raw: string): number {
  try {
    return parseDuration(raw);
  } catch (err) {
    throw new UsageError(`${flag}: ${(err as Error).message}`);
  }
}

/**
 * The warning for options given to a conversation that is already open: they only apply when a
 * conversation starts. (`--tools` and `--needs-approval` reach open conversations with each
 * message, so they never need it.) Undefined when there is nothing to warn about.
 */
export function startOnlyWarning(conversationId: string, options: object): string | undefined {
  const given = options as Record<string, unknown>;
  const flags = Object.keys(given)
    .filter((k) => given[k] !== undefined && START_ONLY_FLAGS[k])
    .map((k) => START_ONLY_FLAGS[k]);
  if (flags.length === 0) return undefined;
  return `Note: ${conversationId} was already open, so ${flags.join(', ')} (which apply when a conversation starts) did not change it.`;
}

/** The `--help` line of `--task-queue`, which every command takes. */
export const TASK_QUEUE_HELP =
  '  --task-queue NAME      the task queue your worker polls (default: AGENT_TASK_QUEUE, else agents)';

/**
 * Takes `--task-queue NAME` (or `--task-queue=NAME`) out of a command line: every command takes
 * it, wherever it stands. Returns the queue (when given) and the other arguments.
 */
export function takeTaskQueue(argv: readonly string[]): { taskQueue?: string; rest: string[] } {
  const rest: string[] = [];
  let taskQueue: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg !== '--task-queue' && !arg.startsWith('--task-queue=')) {
      rest.push(arg);
      continue;
    }
    const value = arg === '--task-queue' ? argv[++i] : arg.slice('--task-queue='.length);
    if (value === undefined || value.startsWith('--'))
      throw new UsageError("option '--task-queue <value>' argument missing");
    const problem = taskQueueProblem(value);
    if (problem) throw new UsageError(problem);
    taskQueue = value;
  }
  return { taskQueue, rest };
}

/** Why `name` cannot be a task queue name, or undefined. */
export function taskQueueProblem(name: string): string | undefined {
  if (!name.trim()) return '--task-queue must not be empty';
  if (name.length > 1000) return '--task-queue is longer than 1000 characters';
  if (/[\u0000-\u001f\u007f]/.test(name)) return '--task-queue must not contain control characters';
  return undefined;
}

/** `--wait`: how long a command waits for the result before it leaves the run going on. */
export const WAIT_FLAG = { wait: { type: 'string' } } as const satisfies Flags;
/** The `--help` line of `--wait`. */
export const WAIT_HELP = '  --wait 2m              stop waiting after this long (exit 3); the run goes on in Temporal';

function toolList(flag: string, raw: string, registered: readonly string[] | undefined): string[] {
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new UsageError(`${flag} needs at least one tool name`);
  // Without a worker in this process the tools are the worker's to know: it refuses unknown ones.
  if (registered === undefined) return [...new Set(names)];
  // `files__*`: any tool of the MCP server `files` (listed by the worker, not known here).
  const unknown = names.filter(
    (n) =>
      !registered.includes(n) &&
      !registered.some((r) => r.endsWith('__*') && n.startsWith(r.slice(0, -1)) && n.length > r.length - 1),
  );
  if (unknown.length)
    throw new UsageError(
      `${flag}: unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (available: ${registered.join(', ')})`,
    );
  return [...new Set(names)];
}

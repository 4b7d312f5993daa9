import { defineCommand } from '../command';
import { DEPLOY_USAGE, parseDeployArgs } from '../deploy-command';
import { EVAL_USAGE, parseEvalArgs } from '../eval-command';
import { RUN_OPTION_HELP } from '../option-flags';
import { parseReplayArgs, REPLAY_USAGE } from '../replay-command';
import { parsePolicyArgs, POLICY_USAGE } from '../policy-command';
import { parseRerunArgs, RERUN_USAGE } from '../rerun-command';
import { JSON_HELP } from './conversation-kinds';

const group = 'Changing agents safely';

/** `replay`: the deploy gate. */
export const replayCommand = defineCommand({
  name: 'replay',
  group,
  synopsis: 'replay',
  summary: 'replay recorded histories against this code (a deploy gate)',
  page: () => `${REPLAY_USAGE}

  Replays agent and conversation histories against the workflow code installed here, and fails
  (exit 1) when one would not replay: the change would break runs in flight (non-determinism).
  From the cluster (TEMPORAL_*, through AGENT_ENCRYPTION_KEYS), or from JSON files.
  --since 7d             histories of runs started within this long (default 7d)
  --query "..."          a visibility query instead, e.g. "WorkflowType = 'agentWorkflow'"
  --limit N              at most N workflows (default 1000), newest first
  --open                 the histories of every open workflow (what a deploy would meet)
  --build ID             the open workflows pinned to this build of --deployment (default
                         AGENT_DEPLOYMENT_NAME): replay them against the build about to ship
  --save DIR             also write each history fetched to DIR as <workflowId>.json
  --histories DIR        replay the .json histories of a folder (or one file) instead; a file's
                         name is its workflow id (temporal workflow show -w ID --output json > ID.json)
  --workflows MODULE     your worker's workflowsPath: your workflows are replayed too (with the
                         agent workflows, as your worker bundles them); without it they are skipped
${JSON_HELP.replace('one JSON object', 'one JSON object: {"replayed", "failed": [{"workflowId", "file"?, "error"}]}')}`,
  parse: (args, { env }) => parseReplayArgs(args, env),
  run: async (command, { target, io }) => (await import('../replay-command')).runReplayCommand(command, target, io),
});

/** `deploy`: Worker Versioning. */
export const deployCommand = defineCommand({
  name: 'deploy',
  group,
  synopsis: 'deploy status|promote|ramp|drain-wait',
  summary: 'Worker Versioning: route runs between builds',
  page: () => `${DEPLOY_USAGE}

  Worker Versioning on Temporal's Worker Deployments (workers set AGENT_DEPLOYMENT_NAME and
  AGENT_BUILD_ID). One-shot runs finish on the build they started on; conversations move to the
  current build at their next idle moment. See docs/deploying.md.
  status                 each build: current, ramping, draining or drained, and the open runs,
                         conversations and other workflows pinned to it
  promote <buildId>      make it current: new runs start on it; conversations are asked to move
  ramp <buildId> <pct>   send this share of new runs to it (0 stops the ramp)
  drain-wait <buildId>   return once no open run is pinned to it: its workers can stop
  --deployment NAME      the deployment (default AGENT_DEPLOYMENT_NAME)
  --timeout 1h           (drain-wait) give up after this long (exit 3; the runs go on)
${JSON_HELP}`,
  parse: (args, { env }) => parseDeployArgs(args, env),
  run: async (command, { target, io }) => (await import('../deploy-command')).runDeployCommand(command, target, io),
});

/** `eval`: datasets scored. */
export const evalCommand = defineCommand({
  name: 'eval',
  group,
  synopsis: 'eval <dataset.jsonl>',
  summary: 'run a dataset of cases and score the answers',
  page: () => `${EVAL_USAGE}

  Runs each case of a JSON Lines dataset as a real agent run and scores it. A line:
    {"input": "..." | {"message", ...run options}, "expected"?: {"contains" | "equals" | "regex" |
     "schema" | "toolCalls"}, "judge"?: "criteria for an LLM judge", "name"?: "..."}
  Prints a table of cases and the summary; exit 1 when the pass rate is under --min-pass.
  --concurrency N        cases run at once (default 4)
  --min-pass 0.9         the lowest pass rate that exits 0 (default 1)
  --compare NAME         run the cases again with this named agent, or else this model, side by side
  --judge-model NAME     the model of the LLM judge (default: the worker's default model)
${RUN_OPTION_HELP}
  --json                 one JSON line per case, then the summary as the last line:
                         {"evalId", "total", "passed", "failed", "passRate", "usage", "costUsd"?}`,
  parse: (args, { registered }) => parseEvalArgs(args, registered),
  run: async (command, { target, io }) => (await import('../eval-command')).runEvalCommand(command, target, io),
});

/** `rerun`: a recorded run again, changed. */
export const rerunCommand = defineCommand({
  name: 'rerun',
  group,
  synopsis: 'rerun <workflowId>',
  summary: 'run a recorded run again with another model or prompt',
  page: () => `${RERUN_USAGE}

  Starts a new run from a recorded one: the recorded messages before model call k (default 1),
  with the change you give. A tool call identical to a recorded one gets the recorded output (no
  side effects) unless --live-tools. Prints the answer and where the new run's steps first differ
  from the recorded run's.
  --from-step k          start at model call k (the messages before it are kept)
  --model NAME           another model (a named model, or provider-prefixed)
  --system "..."         another system message
  --live-tools           run every tool call for real
${JSON_HELP}`,
  parse: (args) => parseRerunArgs(args),
  run: async (command, { target, io }) => (await import('../rerun-command')).runRerunCommand(command, target, io),
});

/** The commands of "Changing agents safely", in the overview's order. */
/** `policy check`: a new policy set tried on past runs' decisions. */
export const policyCommand = defineCommand({
  name: 'policy',
  group,
  synopsis: 'policy check <file-or-dir>',
  summary: "try a new policy set on past runs' decisions before enforcing it",
  page: () => `${POLICY_USAGE}

  Policies (docs/policies.md) decide each tool call a run makes; every decision is recorded in the
  run's history with the request as Cedar was asked it. check tries a new policy set (a .cedar
  file, or a directory of them) on the decisions of past runs, and prints each one it would decide
  otherwise: the run, the step (model calls before it), the tool, before → after, and the new
  policies that decided. Runs record decisions on workers with policies: AGENT_POLICY_MODE=log
  records them without enforcing. No worker is needed.
  --since 7d             runs started within this long (default 7d)
  --query "..."          only runs that match this visibility query too, e.g. "AgentName = 'clerk'"
${JSON_HELP.replace('one JSON object', 'one JSON object: {"runs", "decisions", "changed": [{"workflowId", "step", "tool", "before", "after", "policies"}]}')}`,
  parse: (args) => parsePolicyArgs(args),
  run: async (command, { target, io }) => (await import('../policy-command')).runPolicyCommand(command, target, io),
});

/** The commands of "Changing agents safely", in the overview's order. */
export const CHANGE_COMMANDS = [replayCommand, deployCommand, evalCommand, rerunCommand, policyCommand];

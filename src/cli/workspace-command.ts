import { writeFile } from 'node:fs/promises';
import {
  diffWorkspace,
  listWorkspace,
  stateAtStep,
  workspaceBlobs,
  workspaceFile,
  workspaceStates,
  workspaceTar,
} from '../client/workspaces';
import { commandName } from './command-name';
import { parseFlags, UsageError, wholeNumber } from './option-flags';
import { inSession, type CommandTarget } from './session';
import { tableText } from './table';

/** The usage lines of `workspace`. */
export const WORKSPACE_USAGE = `usage: ${commandName()} workspace <run-or-conversation-id> ls [path] [--step N] [--json]
       ${commandName()} workspace <id> cat <path> [--step N]
       ${commandName()} workspace <id> get <path> --out FILE [--step N]
       ${commandName()} workspace <id> diff [--from-step A] [--to-step B]
       ${commandName()} workspace <id> export --out FILE.tar [--step N]
       ${commandName()} workspace <id> log [--json]`;

/** What `workspace` was asked. */
export type WorkspaceCommand = { id: string; json: boolean; step?: number } & (
  | { action: 'ls'; path: string }
  | { action: 'cat'; path: string }
  | { action: 'get'; path: string; out: string }
  | { action: 'diff'; from?: number; to?: number }
  | { action: 'export'; out: string }
  | { action: 'log' }
);

const ACTIONS = 'ls, cat, get, diff, export or log';

/** Reads `workspace <id> <action> ...`; every mistake is a {@link UsageError}. */
export function parseWorkspaceArgs(argv: string[]): WorkspaceCommand {
  const { values, positionals } = parseFlags(argv, {
    json: { type: 'boolean' },
    step: { type: 'string' },
    'from-step': { type: 'string' },
    'to-step': { type: 'string' },
    out: { type: 'string' },
  });
  const [id, action, ...rest] = positionals;
  if (!id) throw new UsageError(`workspace expects a run or conversation id, then ${ACTIONS}`);
  const base = {
    id,
    json: values.json ?? false,
    ...(values.step !== undefined ? { step: wholeNumber('--step', values.step, 1) } : {}),
  };
  const onePath = (what: string) => {
    if (rest.length !== 1) throw new UsageError(`workspace ${what} expects one path (ls lists them)`);
    return rest[0];
  };
  const out = (what: string) => {
    if (!values.out) throw new UsageError(`workspace ${what} needs --out FILE`);
    return values.out;
  };
  switch (action) {
    case 'ls':
      if (rest.length > 1) throw new UsageError('workspace ls takes at most one path');
      return { ...base, action, path: rest[0] ?? '' };
    case 'cat':
      return { ...base, action, path: onePath('cat') };
    case 'get':
      return { ...base, action, path: onePath('get'), out: out('get') };
    case 'export':
      if (rest.length) throw new UsageError('workspace export takes no path: it exports the whole workspace');
      return { ...base, action, out: out('export') };
    case 'log':
      return { ...base, action };
    case 'diff':
      if (values.step !== undefined) throw new UsageError('workspace diff takes --from-step and --to-step, not --step');
      return {
        ...base,
        action,
        ...(values['from-step'] !== undefined ? { from: wholeNumber('--from-step', values['from-step'], 1) } : {}),
        ...(values['to-step'] !== undefined ? { to: wholeNumber('--to-step', values['to-step'], 1) } : {}),
      };
    default:
      throw new UsageError(
        action === undefined
          ? `workspace ${id} expects ${ACTIONS}`
          : `unknown workspace action "${action}": ${ACTIONS}`,
      );
  }
}

/** Runs `workspace ...`: reads the run's histories and the blob store; no worker is needed. */
export async function runWorkspaceCommand(
  cmd: WorkspaceCommand,
  target: CommandTarget,
  io: { stdout: (text: string) => void; stderr: (line: string) => void; write: (text: string) => void },
): Promise<number> {
  return inSession({ ...target, note: (line) => (cmd.json ? undefined : io.stderr(line)) }, async ({ client }) => {
    const states = await workspaceStates(client, cmd.id);
    const blobs = workspaceBlobs(client);
    const ref = stateAtStep(states, cmd.step);
    switch (cmd.action) {
      case 'ls': {
        const files = await listWorkspace(blobs, ref, cmd.path);
        if (cmd.json) io.stdout(JSON.stringify({ ...(ref ? { ref } : {}), files }));
        else if (!files.length) io.stdout(cmd.path ? `nothing under ${cmd.path}` : 'the workspace is empty');
        else
          io.stdout(
            tableText(
              ['PATH', 'SIZE'],
              files.map((f) => [f.link !== undefined ? `${f.path} -> ${f.link}` : f.path, String(f.size)]),
            ),
          );
        return 0;
      }
      case 'cat': {
        const bytes = Buffer.from(await workspaceFile(blobs, ref, cmd.path));
        if (bytes.includes(0)) {
          io.stderr(`${cmd.path} is not text: write it to a file with get ${cmd.path} --out FILE`);
          return 1;
        }
        io.write(bytes.toString('utf8'));
        return 0;
      }
      case 'get':
        await writeFile(cmd.out, await workspaceFile(blobs, ref, cmd.path));
        io.stderr(`wrote ${cmd.path} to ${cmd.out}`);
        return 0;
      case 'export':
        await writeFile(cmd.out, await workspaceTar(blobs, ref));
        io.stderr(`wrote the workspace${cmd.step ? ` before step ${cmd.step}` : ''} to ${cmd.out}`);
        return 0;
      case 'log':
        if (cmd.json) io.stdout(JSON.stringify(states));
        else if (!states.commits.length) io.stdout('no call has changed the workspace');
        else
          io.stdout(
            tableText(
              ['STEP', 'CALL', 'ADDED', 'CHANGED', 'REMOVED'],
              states.commits.map((c) => [
                String(c.step),
                c.callId,
                c.added.join(' '),
                c.changed.join(' '),
                c.removed.join(' '),
              ]),
            ),
          );
        return 0;
      case 'diff': {
        const { changes, patch } = await diffWorkspace(
          blobs,
          cmd.from === undefined ? states.initial : stateAtStep(states, cmd.from),
          stateAtStep(states, cmd.to),
        );
        io.stdout(cmd.json ? JSON.stringify({ changes, patch }) : patch || 'no changes');
        return 0;
      }
    }
  });
}

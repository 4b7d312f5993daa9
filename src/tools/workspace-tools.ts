import { lstat, readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import {
  BASH,
  commandReport,
  editText,
  EDIT_FILE,
  GREP,
  GREP_MATCHES,
  LIST_FILES,
  numberedLines,
  READ_FILE,
  READ_FILE_LINES,
  WORKSPACE_TOOL_SPECS,
  WRITE_FILE,
} from '../core/workspace/workspace-tools';
import { defineJsonSchemaTool, type AnyToolDefinition, type ToolContext } from './define-tool';
import { ToolError } from './tool-error';
import { WorkspacePathError, type ToolWorkspace } from '../workspace/workspace-host';

/**
 * The workspace tools (`bash`, `read_file`, `write_file`, `edit_file`, `list_files`, `grep`):
 * activities like any tool, each working in the run's workspace (`ctx.workspace`), which the
 * activity restores before and saves after. Mistakes the model can fix (a path outside the
 * workspace, a file that is not there, an edit that does not match) come back to it as errors.
 */
export function workspaceToolDefinitions(): AnyToolDefinition[] {
  const spec = (name: keyof typeof WORKSPACE_TOOL_SPECS) => ({
    name,
    ...WORKSPACE_TOOL_SPECS[name],
    workspace: true,
    // Restoring and saving a large workspace, besides the command: the workflow adds the command's limit.
    timeout: '2m',
  });
  return [
    defineJsonSchemaTool({
      ...spec(BASH),
      // A command that fails is a result, not a throw: attempts are retried only when the worker or
      // the store failed, and each starts from the committed state, so none sees another's half.
      execute: async (args, ctx) => {
        const ws = workspaceOf(ctx);
        const command = String(args.command ?? '');
        if (!command.trim()) throw new ToolError('"command" is empty: give a bash command');
        const seconds = typeof args.timeout === 'number' && args.timeout > 0 ? args.timeout : undefined;
        const result = await ws.run(command, {
          ...(seconds ? { timeoutMs: seconds * 1000 } : {}),
          signal: ctx.signal,
        });
        return commandReport(result);
      },
    }),
    defineJsonSchemaTool({
      ...spec(READ_FILE),
      execute: async (args, ctx) => {
        const ws = workspaceOf(ctx);
        const path = String(args.path ?? '');
        const abs = at(ws, path);
        const text = await readText(abs, path);
        if (text.includes('\u0000')) throw new ToolError(`"${path}" is not a text file (use bash: xxd, file, ...)`);
        return numberedLines(
          text,
          typeof args.offset === 'number' ? args.offset : 1,
          typeof args.limit === 'number' ? args.limit : READ_FILE_LINES,
        );
      },
    }),
    defineJsonSchemaTool({
      ...spec(WRITE_FILE),
      execute: async (args, ctx) => {
        const ws = workspaceOf(ctx);
        const path = String(args.path ?? '');
        const content = String(args.content ?? '');
        at(ws, path);
        await ws.writeFile(path, content).catch((e: NodeJS.ErrnoException) => {
          throw fileError(e, path);
        });
        return `wrote ${Buffer.byteLength(content)} bytes to ${path}`;
      },
    }),
    defineJsonSchemaTool({
      ...spec(EDIT_FILE),
      execute: async (args, ctx) => {
        const ws = workspaceOf(ctx);
        const path = String(args.path ?? '');
        const text = await readText(at(ws, path), path);
        const edit = editText(
          text,
          String(args.old_string ?? ''),
          String(args.new_string ?? ''),
          args.replace_all === true,
        );
        if ('problem' in edit) throw new ToolError(`${path}: ${edit.problem}`);
        await ws.writeFile(path, edit.text);
        return `replaced ${edit.replaced} occurrence${edit.replaced === 1 ? '' : 's'} in ${path}`;
      },
    }),
    defineJsonSchemaTool({
      ...spec(LIST_FILES),
      execute: async (args, ctx) => {
        const ws = workspaceOf(ctx);
        const path = typeof args.path === 'string' ? args.path : '';
        const root = at(ws, path);
        const lines: string[] = [];
        await walk(root, args.recursive !== false, async (abs, isDir) => {
          const rel = relative(ws.dir, abs);
          lines.push(isDir ? `${rel}/` : `${rel} (${(await lstat(abs)).size} bytes)`);
          return lines.length < LIST_LIMIT;
        }).catch((e: NodeJS.ErrnoException) => {
          throw fileError(e, path || '.');
        });
        if (!lines.length) return path ? `${path} is empty` : 'the workspace is empty';
        return lines.length >= LIST_LIMIT ? `${lines.join('\n')}\n(more entries left out)` : lines.join('\n');
      },
    }),
    defineJsonSchemaTool({
      ...spec(GREP),
      execute: async (args, ctx) => {
        const ws = workspaceOf(ctx);
        let pattern: RegExp;
        try {
          pattern = new RegExp(String(args.pattern ?? ''), args.ignore_case === true ? 'i' : '');
        } catch (e) {
          throw new ToolError(`"pattern" is not a regular expression: ${(e as Error).message}`);
        }
        const path = typeof args.path === 'string' ? args.path : '';
        const matches: string[] = [];
        await walk(at(ws, path), true, async (abs, isDir) => {
          if (isDir) return true;
          // Only regular files: reading a FIFO a command left would wait for a writer forever.
          if (!(await lstat(abs)).isFile()) return true;
          const bytes = await readFile(abs);
          if (bytes.length > GREP_FILE_BYTES || bytes.includes(0)) return true;
          const rel = relative(ws.dir, abs);
          for (const [i, line] of bytes.toString('utf8').split('\n').entries())
            if (pattern.test(line)) {
              matches.push(`${rel}:${i + 1}:${line.slice(0, 500)}`);
              if (matches.length >= GREP_MATCHES) return false;
            }
          return true;
        }).catch((e: NodeJS.ErrnoException) => {
          throw fileError(e, path || '.');
        });
        if (!matches.length) return 'no matches';
        return matches.length >= GREP_MATCHES ? `${matches.join('\n')}\n(more matches left out)` : matches.join('\n');
      },
    }),
  ];
}

/** A file's text; a tool error when it is not a regular file (a FIFO would never answer) or cannot be read. */
async function readText(abs: string, path: string): Promise<string> {
  try {
    const st = await lstat(abs);
    if (st.isDirectory()) throw new ToolError(`"${path}" is a directory (list_files shows what it holds)`);
    if (!st.isFile() && !st.isSymbolicLink()) throw new ToolError(`"${path}" is not a regular file`);
    return await readFile(abs, 'utf8');
  } catch (e) {
    throw fileError(e as NodeJS.ErrnoException, path);
  }
}

const LIST_LIMIT = 1000;
const GREP_FILE_BYTES = 4 * 1024 * 1024;

/** The call's workspace; a tool error when the run has none. */
function workspaceOf(ctx: ToolContext): ToolWorkspace {
  if (!ctx.workspace)
    throw new ToolError(
      'this run has no workspace: start it with one ("workspace": true, --workspace on the command line, or the agent\'s workspace option)',
    );
  return ctx.workspace;
}

function at(ws: ToolWorkspace, path: string): string {
  try {
    return ws.resolve(path);
  } catch (e) {
    if (e instanceof WorkspacePathError) throw new ToolError(e.message);
    throw e;
  }
}

function fileError(e: NodeJS.ErrnoException, path: string): Error {
  if (e instanceof ToolError) return e;
  if (e.code === 'ENOENT')
    return new ToolError(`"${path}" does not exist in the workspace (list_files shows what does)`);
  if (e.code === 'EISDIR') return new ToolError(`"${path}" is a directory`);
  if (e.code === 'ENOTDIR') return new ToolError(`"${path}": a part of it is a file, not a directory`);
  if (e.code === 'EACCES' || e.code === 'EPERM') return new ToolError(`"${path}" cannot be read or written here`);
  return e;
}

/** Visits `root` (a file or a directory, in name order) until `visit` answers false; links are not followed. */
async function walk(
  root: string,
  recursive: boolean,
  visit: (abs: string, isDir: boolean) => Promise<boolean>,
): Promise<boolean> {
  const st = await lstat(root);
  if (!st.isDirectory()) return visit(root, false);
  const entries = (await readdir(root, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of entries) {
    const abs = join(root, e.name);
    if (e.isDirectory()) {
      if (!(await visit(abs, true))) return false;
      if (recursive && !(await walk(abs, true, visit))) return false;
    } else if (!(await visit(abs, false))) return false;
  }
  return true;
}

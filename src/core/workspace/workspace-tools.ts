/**
 * The workspace tools an agent can be given by name (`tools: [...workspaceTools]`, or
 * `--tools bash,write_file`): the model runs commands and reads, writes and edits files in the
 * run's workspace. Like the memory tools they are activities (they run on a worker, in its
 * sandbox); these are their names, what the model is told, and the pure parts of what they do.
 */

/** Runs a shell command in the workspace (in the sandbox). */
export const BASH = 'bash';
/** Reads a file of the workspace, or some of its lines. */
export const READ_FILE = 'read_file';
/** Writes a file of the workspace (made with its directories, or replaced). */
export const WRITE_FILE = 'write_file';
/** Replaces an exact string in a file of the workspace. */
export const EDIT_FILE = 'edit_file';
/** Lists a directory of the workspace. */
export const LIST_FILES = 'list_files';
/** Finds lines matching a regular expression in the workspace's files. */
export const GREP = 'grep';

/** The workspace tools' names, for agents' `tools` (`tools: [...workspaceTools]`). */
export const workspaceTools = [BASH, READ_FILE, WRITE_FILE, EDIT_FILE, LIST_FILES, GREP] as const;

/** Whether `name` is one of the built-in workspace tools. */
export function isWorkspaceTool(name: string): boolean {
  return (workspaceTools as readonly string[]).includes(name);
}

/** The most of a file `read_file` shows at once, in lines; `offset` pages on. */
export const READ_FILE_LINES = 2000;
/** The most matches `grep` lists. */
export const GREP_MATCHES = 200;

/** The descriptions and JSON Schemas the model is offered for the workspace tools. */
export const WORKSPACE_TOOL_SPECS = {
  [BASH]: {
    description:
      'Runs a shell command (bash) in the workspace, /workspace, the current directory: build, test, run programs, move files. Returns the exit code, stdout and stderr. Files written under /workspace are kept between calls; /tmp is not. There is no network unless the agent allows a host.',
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command, as you would type it in bash' },
        timeout: {
          type: 'number',
          description: "Seconds it may take (default and most: the workspace's limit, usually 120)",
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
  },
  [READ_FILE]: {
    description: `Reads a text file of the workspace, with line numbers: at most ${READ_FILE_LINES} lines from "offset" (1 is the first).`,
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file, relative to the workspace (or under /workspace)' },
        offset: { type: 'number', description: 'The first line to show (default 1)' },
        limit: { type: 'number', description: `How many lines (default and most ${READ_FILE_LINES})` },
      },
      required: ['path'],
      additionalProperties: false,
    },
  },
  [WRITE_FILE]: {
    description: 'Writes a file of the workspace: creates it (and its directories) or replaces all of it.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file, relative to the workspace' },
        content: { type: 'string', description: 'Its whole new content' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
  },
  [EDIT_FILE]: {
    description:
      'Edits a file of the workspace: replaces an exact string (old_string, which must occur once, or set replace_all) with new_string. Read the file first; copy old_string exactly, with its indentation.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file, relative to the workspace' },
        old_string: { type: 'string', description: 'The exact text to replace' },
        new_string: { type: 'string', description: 'What replaces it' },
        replace_all: { type: 'boolean', description: 'Replace every occurrence (default false: it must occur once)' },
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
  },
  [LIST_FILES]: {
    description:
      'Lists the files and directories of a directory of the workspace (the whole workspace by default), with sizes.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The directory, relative to the workspace (default: the workspace)' },
        recursive: { type: 'boolean', description: 'List subdirectories too (default true)' },
      },
      additionalProperties: false,
    },
  },
  [GREP]: {
    description: `Finds the lines that match a regular expression (JavaScript syntax) in the workspace's text files: path:line:text, at most ${GREP_MATCHES}.`,
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'The regular expression' },
        path: { type: 'string', description: 'A file or directory to search (default: the workspace)' },
        ignore_case: { type: 'boolean', description: 'Match without regard to case' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
  },
} as const;

/** What `edit_file` makes of a file's text: the new text, or the problem the model can fix. */
export function editText(
  text: string,
  oldString: string,
  newString: string,
  replaceAll = false,
): { text: string; replaced: number } | { problem: string } {
  if (oldString === '')
    return { problem: 'old_string is empty: give the exact text to replace (use write_file to write a whole file)' };
  if (oldString === newString) return { problem: 'old_string and new_string are the same: nothing would change' };
  const count = text.split(oldString).length - 1;
  if (count === 0)
    return {
      problem: 'old_string does not occur in the file: read it again and copy the text exactly, with its indentation',
    };
  if (count > 1 && !replaceAll)
    return {
      problem: `old_string occurs ${count} times: give more of the surrounding text so it occurs once, or set replace_all`,
    };
  return { text: text.split(oldString).join(newString), replaced: count };
}

/** Lines of a file as `read_file` shows them: numbered from `offset` (1-based), at most `limit`, with what is left said. */
export function numberedLines(text: string, offset = 1, limit = READ_FILE_LINES): string {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const from = Math.max(1, Math.floor(offset));
  const count = Math.max(1, Math.min(READ_FILE_LINES, Math.floor(limit)));
  if (text === '') return '(the file is empty)';
  if (from > lines.length) return `(the file has ${lines.length} lines: offset ${from} is past its end)`;
  const shown = lines.slice(from - 1, from - 1 + count);
  const width = String(from + shown.length - 1).length;
  const body = shown.map((line, i) => `${String(from + i).padStart(width)}\t${line}`).join('\n');
  const rest = lines.length - (from - 1 + shown.length);
  return rest > 0 ? `${body}\n(${rest} more lines: read on with offset ${from + shown.length})` : body;
}

/** How a command's end reads to the model: its exit code (or why it ended), then its output. */
export function commandReport(r: {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
  diskFull?: boolean;
  signal?: string;
}): string {
  const head = r.timedOut
    ? 'the command timed out and was killed'
    : r.diskFull
      ? 'the command filled the workspace past its size and was killed'
      : r.exitCode === null
        ? `the command was killed (${r.signal ?? 'signal'})`
        : `exit code ${r.exitCode}`;
  const parts = [head];
  if (r.stdout) parts.push(`stdout:\n${r.stdout}`);
  if (r.stderr) parts.push(`stderr:\n${r.stderr}`);
  if (!r.stdout && !r.stderr) parts.push('(no output)');
  return parts.join('\n');
}

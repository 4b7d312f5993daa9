import {
  contentsToStore,
  manifestProblem,
  normalizeWorkspacePath,
  unchanged,
  workspaceChanges,
  workspaceManifest,
  workspacePathProblem,
  workspaceSize,
  type WorkspaceFile,
} from '../../src/core/workspace/manifest';

const hash = (c: string) => c.repeat(64);
const file = (path: string, c: string, size = 1, executable?: boolean): WorkspaceFile => ({
  path,
  hash: hash(c),
  size,
  ...(executable ? { executable } : {}),
});

describe('workspace paths', () => {
  it('takes relative, normalised paths and says what is wrong with the others', () => {
    expect(workspacePathProblem('src/index.ts')).toBeUndefined();
    expect(workspacePathProblem('.env')).toBeUndefined();
    expect(workspacePathProblem('')).toMatch(/must not be empty/);
    expect(workspacePathProblem('/etc/shadow')).toMatch(/is absolute: name a path inside the workspace/);
    expect(workspacePathProblem('../secrets')).toMatch(/leads outside the workspace/);
    expect(workspacePathProblem('a/../../b')).toMatch(/leads outside the workspace/);
    expect(workspacePathProblem('a//b')).toMatch(/not normalised/);
    expect(workspacePathProblem('./a')).toMatch(/not normalised/);
    expect(workspacePathProblem('a\\b')).toMatch(/uses "\\"/);
    expect(workspacePathProblem('a\nb')).toBe('"a\\nb" contains a control character');
    expect(workspacePathProblem('x'.repeat(4001))).toMatch(/at most 4000 characters/);
  });

  it('normalises what a model writes, and refuses what leads outside', () => {
    expect(normalizeWorkspacePath('./src//a.ts/')).toBe('src/a.ts');
    expect(normalizeWorkspacePath('/workspace/src/a.ts')).toBe('src/a.ts');
    expect(normalizeWorkspacePath('/workspace')).toBe('');
    expect(normalizeWorkspacePath('.')).toBe('');
    expect(normalizeWorkspacePath('a/../b')).toBe('b');
    expect(normalizeWorkspacePath(' notes.md ')).toBe('notes.md');
    expect(normalizeWorkspacePath('..')).toBeUndefined();
    expect(normalizeWorkspacePath('a/../../b')).toBeUndefined();
    expect(normalizeWorkspacePath('/etc/shadow')).toBeUndefined();
    expect(normalizeWorkspacePath('/workspacefoo/a')).toBeUndefined();
    expect(normalizeWorkspacePath('a\u0000b')).toBeUndefined();
    expect(normalizeWorkspacePath('/home/agent/a', '/home/agent')).toBe('a');
  });
});

describe('workspace manifests', () => {
  it('sorts files by path, the same on every worker, and refuses a path listed twice', () => {
    const m = workspaceManifest([file('b', 'b'), file('a/z', 'a'), file('B', 'c')]);
    expect(m.files.map((f) => f.path)).toEqual(['B', 'a/z', 'b']);
    expect(manifestProblem(m)).toBeUndefined();
    expect(() => workspaceManifest([file('a', 'a'), file('a', 'b')])).toThrow('the workspace lists "a" twice');
  });

  it('says what is wrong with a stored manifest, and refuses a newer version by name', () => {
    expect(manifestProblem(null)).toMatch(/must be an object/);
    expect(manifestProblem({ version: 2, files: [] })).toMatch(
      /version 2, newer than this build reads \(1\): run it on a worker of the build that wrote it/,
    );
    expect(manifestProblem({ files: [] })).toMatch(/no known version/);
    expect(manifestProblem({ version: 1 })).toMatch(/no files list/);
    expect(manifestProblem({ version: 1, files: [{ path: '../x', hash: hash('a'), size: 1 }] })).toMatch(
      /file 0 of the workspace manifest: .*leads outside the workspace/,
    );
    expect(manifestProblem({ version: 1, files: [{ path: 'x', hash: 'abc', size: 1 }] })).toMatch(/no SHA-256 hash/);
    expect(manifestProblem({ version: 1, files: [{ path: 'x', hash: hash('a'), size: -1 }] })).toMatch(/no size/);
    expect(manifestProblem({ version: 1, files: [file('b', 'a'), file('a', 'a')] })).toMatch(
      /not sorted by path at "a"/,
    );
  });

  it('lists what changed by path: contents, the execute bit, files added and removed', () => {
    const before = workspaceManifest([file('a', 'a'), file('b', 'b'), file('run.sh', 'c')]);
    const after = workspaceManifest([file('a', 'a'), file('b', 'd'), file('c', 'c'), file('run.sh', 'c', 1, true)]);
    expect(workspaceChanges(before, after)).toEqual({ added: ['c'], changed: ['b', 'run.sh'], removed: [] });
    expect(workspaceChanges(after, before)).toEqual({ added: [], changed: ['b', 'run.sh'], removed: ['c'] });
    expect(workspaceChanges(undefined, before).added).toEqual(['a', 'b', 'run.sh']);
    expect(unchanged(workspaceChanges(before, before))).toBe(true);
    expect(unchanged(workspaceChanges(before, after))).toBe(false);
  });

  it('stores each content once: only what the store lacks, shared contents once', () => {
    const m = workspaceManifest([file('a', 'a', 10), file('copy-of-a', 'a', 10), file('b', 'b', 5)]);
    expect(contentsToStore(m, new Set())).toEqual([hash('a'), hash('b')]);
    expect(contentsToStore(m, new Set([hash('a')]))).toEqual([hash('b')]);
    expect(workspaceSize(m)).toEqual({ files: 3, bytes: 25 });
  });
});

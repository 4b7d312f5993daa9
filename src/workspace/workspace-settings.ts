import type { BlobStore } from '../storage/blob-store';
import { BubblewrapSandbox } from './bubblewrap-sandbox';
import type { CommandSandbox } from './sandbox';
import { WorkspaceHost } from './workspace-host';

/**
 * A worker's workspaces: their directory (see `workerSettings`) and sandbox (bubblewrap unless
 * given one). Nothing is started: the sandbox is checked at a run's first command, and says then
 * what is missing.
 */
export function workspaceHost(sandbox: CommandSandbox | undefined, dir: string, blobs: BlobStore): WorkspaceHost {
  const chosen = sandbox ?? new BubblewrapSandbox();
  // A root worker runs bubblewrap as an unprivileged user, who must own the workspace's files.
  const uid = chosen instanceof BubblewrapSandbox ? chosen.sandboxUid : undefined;
  return new WorkspaceHost({ root: dir, blobs, sandbox: chosen, ...(uid !== undefined ? { uid } : {}) });
}

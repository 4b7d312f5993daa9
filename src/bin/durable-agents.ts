#!/usr/bin/env node
/**
 * The `durable-agents` command of the published package: every command of the command table
 * (`cli/commands/index.ts`). It brings no agents of its own: the client commands talk to the
 * user's workers, and `worker` and `serve` run the agents a `--module` names.
 */
import { runMain } from '../cli/main';

runMain();

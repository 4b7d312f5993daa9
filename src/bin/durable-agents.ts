#!/usr/bin/env node
/** The `durable-agents` command of the published package: the same client as `client.ts`. */
import { runMain } from '../cli/main';

runMain();

import { exampleAgents } from './agents';
import { exampleToolRegistry } from '.';
import type { LocalWorker } from '../../src/cli/session';

/**
 * The worker this repository's `client.ts`, MCP server and demo run in their own process when
 * the dev server is embedded: the example agents and the built-in tools. The package's bin never
 * uses it (see `LocalWorker`).
 */
export function demoWorker(): LocalWorker {
  return { agents: exampleAgents, registry: exampleToolRegistry() };
}

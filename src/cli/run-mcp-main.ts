import { UsageError } from './option-flags';
import { commandName } from './command-name';
import type { CliHost } from './main';
import { serveMcp } from './mcp-command';
import { serveA2a } from './a2a-command';
import { commandHelp, usageOf, wantsHelp } from './help';
import { exitWhenFlushed } from './exit';

/** Runs `mcp` from a command line and exits: 0 when it stopped, 2 for bad usage or a failure to start. */
export function runMcpMain(argv: string[] = process.argv.slice(2), host: CliHost = {}): void {
  runServerMain('mcp', argv, host);
}

/** Runs a server command (`mcp`, `a2a`) from a command line and exits: 0 when it stopped, 2 for bad usage or a failure to start. */
export function runServerMain(command: 'mcp' | 'a2a', argv: string[], host: CliHost = {}): void {
  if (wantsHelp(argv)) {
    console.log(commandHelp(command));
    exitWhenFlushed(0);
    return;
  }
  (command === 'mcp' ? serveMcp : serveA2a)(argv, host.localWorker).then(
    () => exitWhenFlushed(0),
    (err) => {
      const message = err instanceof Error ? err.message : String(err);
      process.stderr.write(
        err instanceof UsageError
          ? `${commandName()} ${command}: ${message}\n${usageOf(command)}\n`
          : `${commandName()} ${command}: ${message}\n`,
      );
      exitWhenFlushed(2);
    },
  );
}

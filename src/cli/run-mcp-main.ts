import { UsageError } from './option-flags';
import { commandName } from './command-name';
import type { CliHost } from './main';
import { serveMcp } from './mcp-command';
import { commandHelp, usageOf, wantsHelp } from './help';
import { exitWhenFlushed } from './exit';

/** Runs `mcp` from a command line and exits: 0 when it stopped, 2 for bad usage or a failure to start. */
export function runMcpMain(argv: string[] = process.argv.slice(2), host: CliHost = {}): void {
  if (wantsHelp(argv)) {
    console.log(commandHelp('mcp'));
    exitWhenFlushed(0);
    return;
  }
  serveMcp(argv, host.localWorker).then(
    () => exitWhenFlushed(0),
    (err) => {
      const message = err instanceof Error ? err.message : String(err);
      process.stderr.write(
        err instanceof UsageError
          ? `${commandName()} mcp: ${message}\n${usageOf('mcp')}\n`
          : `${commandName()} mcp: ${message}\n`,
      );
      exitWhenFlushed(2);
    },
  );
}

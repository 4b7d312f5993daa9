/**
 * Ends the process with `code` once stdout and stderr have handed everything written to them to
 * the system. Writes to a pipe are asynchronous on Linux and macOS: `process.exit` right after a
 * large write loses what the pipe had not taken yet (`run --json | jq` got 64 KiB of a 4 MB
 * answer). The process is still ended here rather than left to end by itself, because a command
 * can leave handles open that are not its to close (an embedded dev server's child, a worker).
 */
export function exitWhenFlushed(code: number): void {
  process.exitCode = code;
  const streams = [process.stdout, process.stderr];
  let pending = streams.length;
  const flushed = () => {
    pending -= 1;
    if (pending === 0) process.exit(code);
  };
  for (const stream of streams) {
    if (stream.destroyed || stream.writableEnded) {
      flushed();
      continue;
    }
    let done = false;
    const once = () => {
      if (!done) {
        done = true;
        flushed();
      }
    };
    // A reader that went away (`| head`) fails the write: nothing more can be delivered, so go.
    stream.once('error', once);
    // Writes are delivered in order: this callback runs once everything before it was taken.
    stream.write('', once);
  }
}

/**
 * Runs `call` with the provider SDK's console warnings caught, and shows each one once per `seen`
 * (one set per worker's adapter) and model. The Anthropic SDK warns on every request to a
 * deprecated model ("The model 'claude-…' is deprecated…"), which in a worker is every model call,
 * and in users' tests every scripted one; the warning matters once.
 *
 * The SDKs warn as a request starts, synchronously, and `call` only starts it (it returns the
 * request's promise), so `console.warn` is replaced for exactly that moment: nothing else runs
 * meanwhile.
 */
export function withWarningsOnce<T>(seen: Set<string>, model: string, call: () => T): T {
  const warn = console.warn;
  const caught: unknown[][] = [];
  console.warn = (...args: unknown[]) => void caught.push(args);
  try {
    return call();
  } finally {
    console.warn = warn;
    for (const args of caught) {
      const key = `${model}\n${args.map(String).join(' ')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      warn(...args, '\n(durable-agents shows this once per worker and model)');
    }
  }
}

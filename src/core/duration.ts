const UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a duration such as `"30s"`, `"1.5m"`, `"2h"`, `"250ms"` or a number of milliseconds.
 * Throws an `Error` naming the accepted forms, so a bad `--max-time` fails before any run starts.
 */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value > 0) return value;
    throw new Error(`invalid duration ${value}: expected a positive number of milliseconds`);
  }
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(value);
  const ms = match ? Number(match[1]) * UNITS_MS[(match[2] ?? 'ms').toLowerCase()] : NaN;
  if (!(ms > 0)) {
    throw new Error(`invalid duration "${value}": expected a positive number with a unit, e.g. 500ms, 30s, 5m, 1h`);
  }
  return ms;
}

const UNITS_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The units a duration string may use, for help texts and error messages. */
export const DURATION_UNITS = Object.keys(UNITS_MS);

const WITH_UNIT = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/i;
const BARE_NUMBER = /^\s*\d+(?:\.\d+)?\s*$/;

/**
 * Parses a duration such as `"30s"`, `"1.5m"`, `"2h"`, `"250ms"`, or a number of milliseconds.
 * A string needs a unit: `"5"` is refused, because people mean seconds as often as milliseconds,
 * and guessing wrong ends a run at once or lets it run 1000 times too long. Throws an `Error`
 * naming the accepted units, so a bad `--max-time` fails before any run starts.
 */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value > 0) return value;
    throw new Error(`invalid duration ${value}: expected a positive number of milliseconds`);
  }
  const units = DURATION_UNITS.join(', ');
  if (typeof value === 'string' && BARE_NUMBER.test(value)) {
    throw new Error(`invalid duration "${value}": add a unit (${units}), e.g. ${value.trim()}s`);
  }
  const match = typeof value === 'string' ? WITH_UNIT.exec(value) : null;
  const ms = match ? Number(match[1]) * UNITS_MS[match[2].toLowerCase()] : NaN;
  if (!(ms > 0))
    throw new Error(
      `invalid duration "${value}": expected a positive number with a unit (${units}), e.g. 500ms, 30s, 5m, 1h`,
    );
  return ms;
}

/** A duration for people: `"90s"`, `"3h"`, `"2d 4h"`, `"250ms"` (the two largest units). */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1_000) * 1_000;
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const n = Math.floor(rest / UNITS_MS[unit]);
    if (n > 0 && parts.length < 2) parts.push(`${n}${unit}`);
    if (n > 0) rest -= n * UNITS_MS[unit];
  }
  return parts.join(' ');
}

/**
 * What the scale bench measures of processes on this machine (CPU time and resident memory, from
 * /proc) and of the workers' Prometheus endpoints (the workflow cache).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICK_MS = 1000 / Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

/** A process's CPU time so far (user + system), in milliseconds. */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
  } catch {
    return 0;
  }
}

/** A process's resident memory, in MB. */
export function rssMb(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS:'));
    return line ? Number(line.replace(/\D+/g, '')) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The first child process of `pid` (the dev server under the CLI's guardian), if any. */
export function childOf(pid: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.split(') ')[1].split(' ')[1]) === pid) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** The workflow cache of one worker, from its Prometheus endpoint (Temporal's `sticky_cache_*` metrics). */
export interface CacheFigures {
  hits: number;
  misses: number;
  size: number;
  forcedEvictions: number;
}

/** Reads a worker's cache counters (summed over its task queues); zeros when the endpoint does not answer. */
export async function cacheFigures(metricsPort: number): Promise<CacheFigures> {
  const figures: CacheFigures = { hits: 0, misses: 0, size: 0, forcedEvictions: 0 };
  let text = '';
  try {
    text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  } catch {
    return figures;
  }
  const sum = (name: string) =>
    [
      ...text.matchAll(
        new RegExp(`^(?:temporal_)?${name}(?:_total)?(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?)`, 'gm'),
      ),
    ]
      .map((m) => Number(m[1]))
      .reduce((a, b) => a + b, 0);
  figures.hits = sum('sticky_cache_hit');
  figures.misses = sum('sticky_cache_miss');
  figures.size = sum('sticky_cache_size');
  figures.forcedEvictions = sum('sticky_cache_total_forced_eviction');
  return figures;
}

/** The value below which p percent of `values` lie (nearest rank); NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

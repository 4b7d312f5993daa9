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

/** CPU time so far (ms) of the workers (summed), the server (when local) and this process. */
export function cpuNow(workerPids: readonly number[], serverPid: number | undefined) {
  return {
    workers: workerPids.reduce((a, pid) => a + cpuMs(pid), 0),
    server: serverPid ? cpuMs(serverPid) : 0,
    driver: cpuMs(process.pid),
    machine: machineBusyMs(),
  };
}

/**
 * CPU time the whole machine has been busy (all cores, ms): what else runs there (tests, a build)
 * takes cores from the server and the workers, and the figures should say so.
 */
function machineBusyMs(): number {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .split(/\s+/)
      .map(Number);
    return (user + nice + system + irq + softirq + steal) * CLOCK_TICK_MS;
  } catch {
    return NaN;
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

/**
 * How the median latency of turns sent in the last quarter of a run of `runMs` compares with that
 * of the first quarter (1: flat). A backlog shows as growth before the percentiles look alarming.
 */
export function growth(timeline: ReadonlyArray<readonly [sentAtMs: number, latencyMs: number]>, runMs: number): number {
  const first = timeline.filter(([at]) => at < runMs / 4).map(([, ms]) => ms);
  const last = timeline.filter(([at]) => at >= (runMs * 3) / 4).map(([, ms]) => ms);
  return percentile(last, 50) / percentile(first, 50);
}

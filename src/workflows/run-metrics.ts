import { metricMeter } from '@temporalio/workflow';

/**
 * Counts a run (or conversation turn) by how it ended: `agent_runs{status, kind, agent}` on the
 * worker's metric meter. Metrics are not commands: they leave history alone, and the SDK does not
 * emit them again on replay.
 */
export function countRun(kind: 'run' | 'turn', status: string, agent: string | undefined): void {
  metricMeter
    .createCounter('agent_runs', 'runs', 'Agent runs and conversation turns by final status')
    .add(1, { kind, status, ...(agent ? { agent } : {}) });
}

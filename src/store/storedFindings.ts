// A stored run's health findings as the records the run record, `agent-rl health` and the worker's
// `finished` message carry (shared/health/findings.ts; the episodes picked by store/healthEpisodes.ts):
// one read of the database, on its own connection, closed again.
import { findingRecord, type FindingRecord } from '../shared/health/findings';
import { openStore } from './openStore';
import { RunReader } from './runReader';

export function storedFindings(db: string, busyTimeoutMs: number, runId: number): FindingRecord[] {
  const store = openStore(db, { busyTimeoutMs });
  try {
    return new RunReader(store).findings(runId).map(findingRecord);
  } finally {
    store.close();
  }
}

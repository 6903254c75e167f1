// How the share coordinator combines state batches (Kafka's PersisterStateBatchCombiner): the batches
// of a write over those stored, or of an update over its snapshot.
// - Batches ending below the start offset go; one straddling it keeps only its part from the start.
// - Where batches overlap, each offset takes the batch of the highest priority: the higher delivery
//   count, then the higher delivery state (states only move forward: AVAILABLE 0 < ACKNOWLEDGED 2 <
//   ARCHIVED 4), so a late or repeated write cannot undo what a later one recorded.
// - The result is sorted, without overlaps, and contiguous batches of the same state and count are one.
import type { StateBatch } from './persister';

function priority(a: StateBatch, b: StateBatch): number {
  return a.deliveryCount !== b.deliveryCount ? a.deliveryCount - b.deliveryCount : a.deliveryState - b.deliveryState;
}

/** startOffset -1: no pruning (the state has no start yet). */
export function combineStateBatches(soFar: readonly StateBatch[], added: readonly StateBatch[], startOffset: bigint): StateBatch[] {
  const batches: StateBatch[] = [];
  for (const b of [...soFar, ...added]) {
    if (b.lastOffset < b.firstOffset) continue;
    if (startOffset === -1n || b.firstOffset >= startOffset) batches.push(b);
    else if (b.lastOffset >= startOffset) batches.push({ ...b, firstOffset: startOffset });
  }
  if (batches.length < 2) return batches.map((b) => ({ ...b }));
  // Every offset where some batch starts or ends splits the range into pieces covered by the same batches.
  const cuts = [...new Set(batches.flatMap((b) => [b.firstOffset, b.lastOffset + 1n]))].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const byStart = [...batches].sort((x, y) => (x.firstOffset < y.firstOffset ? -1 : x.firstOffset > y.firstOffset ? 1 : 0));
  const out: StateBatch[] = [];
  let active: StateBatch[] = [];
  let next = 0;
  for (let i = 0; i + 1 < cuts.length; i++) {
    const from = cuts[i];
    const to = cuts[i + 1] - 1n;
    while (next < byStart.length && byStart[next].firstOffset <= from) active.push(byStart[next++]);
    active = active.filter((b) => b.lastOffset >= from);
    if (active.length === 0) continue;
    const top = active.reduce((best, b) => (priority(b, best) > 0 ? b : best));
    const last = out[out.length - 1];
    if (last && last.lastOffset + 1n === from && last.deliveryState === top.deliveryState && last.deliveryCount === top.deliveryCount) {
      out[out.length - 1] = { ...last, lastOffset: to };
    } else {
      out.push({ firstOffset: from, lastOffset: to, deliveryState: top.deliveryState, deliveryCount: top.deliveryCount });
    }
  }
  return out;
}

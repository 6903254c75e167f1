import { expect } from 'chai';
import { placeReplicas, type Placement, type RandomInt, type UsableBroker } from '../../src/cluster/replica-placement';

/** Always the lowest value: every random start at 0, every shuffle a fixed permutation. */
const zero: RandomInt = () => 0;

/** A small seeded generator (an LCG), so spreads over many partitions are checked on varied starts. */
function seeded(seed: number): RandomInt {
  let s = seed >>> 0;
  return (bound) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % bound;
  };
}

const brokers = (...specs: [number, string | null, boolean?][]): UsableBroker[] =>
  specs.map(([id, rack, fenced]) => ({ id, rack, fenced: fenced ?? false }));

function replicasOf(p: Placement): number[][] {
  if ('error' in p) throw new Error(p.error);
  return p.replicas;
}

function counts<T>(ids: T[]): Map<T, number> {
  const m = new Map<T, number>();
  for (const id of ids) m.set(id, (m.get(id) ?? 0) + 1);
  return m;
}

describe('cluster/replica-placement (StripedReplicaPlacer)', () => {
  it('a single broker holds every partition', () => {
    expect(replicasOf(placeReplicas(brokers([1, null]), 3, 1, zero))).to.deep.equal([[1], [1], [1]]);
  });

  it('stripes partitions over brokers: each starts one broker further on', () => {
    const placed = replicasOf(placeReplicas(brokers([3, null], [1, null], [2, null]), 3, 3, zero));
    expect(placed).to.deep.equal([[1, 2, 3], [2, 3, 1], [3, 1, 2]]);
  });

  it('spreads leaders and replicas evenly, never one broker twice in a partition', () => {
    for (const seed of [1, 7, 42, 1234]) {
      const placed = replicasOf(placeReplicas(brokers([0, null], [1, null], [2, null], [3, null], [4, null], [5, null]), 60, 3, seeded(seed)));
      expect(placed).to.have.length(60);
      for (const r of placed) expect(new Set(r).size, `${r}`).to.equal(3);
      // Every run of 6 partitions (as many as brokers) has each broker lead once.
      expect([...counts(placed.map((r) => r[0]!)).values()]).to.deep.equal([10, 10, 10, 10, 10, 10]);
      expect([...counts(placed.flat()).values()]).to.deep.equal([30, 30, 30, 30, 30, 30]);
    }
  });

  it('puts the replicas of a partition on different racks when it can', () => {
    const racked = brokers([1, 'a'], [2, 'a'], [3, 'b'], [4, 'b'], [5, 'c'], [6, 'c']);
    const rackOf = new Map(racked.map((b) => [b.id, b.rack]));
    for (const seed of [3, 99]) {
      const placed = replicasOf(placeReplicas(racked, 30, 3, seeded(seed)));
      for (const r of placed) expect(new Set(r.map((id) => rackOf.get(id))).size, `${r}`).to.equal(3);
      // Leaders go round the racks, and round the brokers inside them.
      expect([...counts(placed.map((r) => rackOf.get(r[0]!))).values()]).to.deep.equal([10, 10, 10]);
      expect([...counts(placed.map((r) => r[0]!)).values()]).to.deep.equal([5, 5, 5, 5, 5, 5]);
    }
    // Two racks, replication factor 2: one replica in each.
    const two = brokers([1, 'x'], [2, 'x'], [3, 'y'], [4, 'y']);
    for (const r of replicasOf(placeReplicas(two, 20, 2, seeded(5)))) {
      expect(r.map((id) => (id <= 2 ? 'x' : 'y')).sort()).to.deep.equal(['x', 'y']);
    }
  });

  it("places exactly as Kafka 4.4's StripedReplicaPlacer", () => {
    // Produced by Kafka 4.4.0's StripedReplicaPlacer.place with a java.util.Random whose nextInt(n)
    // always answers 0 ("zero") or n - 1 ("last"): both fix every random start and every shuffle
    // whatever order Kafka's HashMap visits racks in.
    const last: RandomInt = (bound) => bound - 1;
    const racks6 = brokers([1, 'a'], [2, 'a'], [3, 'b'], [4, 'b'], [5, 'c'], [6, 'c']);
    const racks2 = brokers([1, 'a'], [2, 'a'], [3, 'b'], [4, 'b']);
    const fenced = brokers([1, null, true], [2, null], [3, null]);
    const plain = brokers([3, null], [1, null], [2, null], [4, null]);
    const mixed = brokers([1, null], [2, 'r1'], [3, 'r1'], [4, 'r2', true], [5, 'r2']);
    const cases: [UsableBroker[], number, number, RandomInt, number[][]][] = [
      [racks6, 8, 3, zero, [[1, 3, 5], [4, 6, 2], [5, 1, 3], [2, 4, 6], [3, 5, 1], [6, 2, 4], [4, 6, 2], [5, 1, 3]]],
      [racks2, 6, 3, zero, [[1, 3, 2], [4, 2, 3], [1, 3, 2], [4, 2, 3], [4, 2, 3], [1, 3, 2]]],
      [fenced, 5, 3, zero, [[2, 3, 1], [3, 2, 1], [3, 2, 1], [2, 3, 1], [2, 3, 1]]],
      [plain, 9, 2, zero, [[1, 2], [2, 3], [3, 4], [4, 1], [2, 3], [3, 4], [4, 1], [1, 2], [3, 4]]],
      [mixed, 7, 3, zero, [[1, 2, 5], [3, 5, 1], [5, 1, 2], [1, 3, 5], [5, 1, 3], [1, 2, 5], [3, 5, 1]]],
      [racks6, 8, 3, last, [[6, 2, 4], [1, 3, 5], [4, 6, 2], [5, 1, 3], [2, 4, 6], [3, 5, 1], [6, 2, 4], [1, 3, 5]]],
      [racks2, 6, 3, last, [[4, 2, 3], [1, 3, 2], [4, 2, 3], [1, 3, 2], [4, 2, 3], [1, 3, 2]]],
      [fenced, 5, 3, last, [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1], [3, 2, 1]]],
      [plain, 9, 2, last, [[4, 1], [1, 2], [2, 3], [3, 4], [4, 1], [1, 2], [2, 3], [3, 4], [4, 1]]],
      [mixed, 7, 3, last, [[5, 1, 3], [1, 2, 5], [3, 5, 1], [5, 1, 2], [1, 3, 5], [2, 5, 1], [5, 1, 3]]],
    ];
    for (const [bs, partitions, rf, random, expected] of cases) {
      expect(replicasOf(placeReplicas(bs, partitions, rf, random))).to.deep.equal(expected);
    }
  });

  it('never makes a fenced broker leader, and uses it only when unfenced brokers run out', () => {
    const some = brokers([1, null, true], [2, null], [3, null]);
    for (const seed of [1, 2, 3]) {
      const rf2 = replicasOf(placeReplicas(some, 12, 2, seeded(seed)));
      expect(rf2.flat()).to.not.include(1);
      const rf3 = replicasOf(placeReplicas(some, 12, 3, seeded(seed)));
      for (const r of rf3) {
        expect(r[0]).to.not.equal(1);
        expect(r).to.include(1);
      }
    }
  });

  it("refuses what it cannot place, with Kafka 4.4's messages", () => {
    expect(placeReplicas(brokers([1, null], [2, null]), 1, 3, zero)).to.deep.equal({
      error: 'The target replication factor of 3 cannot be reached because only 2 broker(s) are registered or some brokers have all their log directories cordoned.',
    });
    // Fenced brokers count as registered: only their being all fenced refuses.
    expect(placeReplicas(brokers([1, null, true], [2, null]), 1, 2, zero)).to.not.have.property('error');
    expect(placeReplicas(brokers([1, null, true], [2, null, true]), 1, 1, zero)).to.deep.equal({
      error: 'All brokers are currently fenced, or have all their log directories cordoned.',
    });
    expect(placeReplicas(brokers([1, null]), 1, 0, zero)).to.deep.equal({
      error: 'Invalid replication factor 0: the replication factor must be positive.',
    });
    expect(placeReplicas([], 1, 1, zero)).to.have.property('error');
  });
});

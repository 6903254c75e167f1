// Where the replicas of new partitions go when CreateTopics or CreatePartitions names no brokers:
// Kafka 4.4's KRaft StripedReplicaPlacer (metadata/.../metadata/placement/StripedReplicaPlacer.java),
// ported rule for rule, as ReplicationControlManager calls it for both requests.
//
// Racks (brokers without one form a rack of their own) are taken round robin from a random start
// that moves on by one per partition, so consecutive partitions draw their leaders from consecutive
// racks ("striped"); inside a rack, brokers are taken round robin from a random start too. Unfenced
// brokers are preferred and a leader is never fenced. Once as many partitions have been placed as
// there are unfenced brokers, racks and brokers are reshuffled so the same sets do not repeat.
//
// Kafka 4.4 does not look at a topic's existing partitions when CreatePartitions adds some: they
// only give the replication factor (that of partition 0), which the caller passes in.

/** A broker that may hold new replicas: registered and not shutting down (Kafka's UsableBroker). */
export interface UsableBroker {
  id: number;
  rack: string | null;
  /** Fenced brokers (not heartbeating) get replicas only when the unfenced ones run out, never leaders. */
  fenced: boolean;
}

/** Java's Random.nextInt(bound): an integer in [0, bound). Injected so tests are deterministic. */
export type RandomInt = (bound: number) => number;

export const mathRandomInt: RandomInt = (bound) => Math.floor(Math.random() * bound);

/** The replica lists, one per partition, leader first; or why they cannot be placed (Kafka's InvalidReplicationFactorException). */
export type Placement = { replicas: number[][] } | { error: string };

/**
 * StripedReplicaPlacer.place: `numPartitions` replica lists of `replicationFactor` distinct brokers.
 * The error texts are Kafka 4.4's; its controller prefixes them with "Unable to replicate the
 * partition N time(s): " for CreateTopics (not for CreatePartitions).
 */
export function placeReplicas(brokers: readonly UsableBroker[], numPartitions: number, replicationFactor: number,
  random: RandomInt): Placement {
  const racks = new RackList(brokers, random);
  const error = racks.replicationFactorError(replicationFactor);
  if (error) return { error };
  return { replicas: Array.from({ length: numPartitions }, () => racks.place(replicationFactor)) };
}

/** Java's Collections.shuffle(list, random), in place. */
function shuffle<T>(list: T[], random: RandomInt): void {
  for (let i = list.length; i > 1; i--) {
    const j = random(i);
    [list[i - 1], list[j]] = [list[j]!, list[i - 1]!];
  }
}

/**
 * Brokers handed out round robin from a moving start. An iteration "epoch" is one partition
 * placement: within it each broker comes out at most once; a new epoch restarts one further on.
 */
class BrokerList {
  readonly ids: number[] = [];
  private index = 0;
  private offset = 0;
  private epoch = 0;

  initialize(random: RandomInt): void {
    if (this.ids.length === 0) return;
    this.ids.sort((a, b) => a - b);
    this.offset = random(this.ids.length);
  }

  /** The next broker of this epoch, or -1 when every broker has come out in it. */
  next(epoch: number): number {
    if (this.ids.length === 0) return -1;
    if (this.epoch !== epoch) {
      this.epoch = epoch;
      this.index = 0;
      this.offset = (this.offset + 1) % this.ids.length;
    }
    if (this.index >= this.ids.length) return -1;
    return this.ids[(this.index++ + this.offset) % this.ids.length]!;
  }
}

class Rack {
  readonly fenced = new BrokerList();
  readonly unfenced = new BrokerList();

  /** Any broker, unfenced ones first. */
  next(epoch: number): number {
    const id = this.unfenced.next(epoch);
    return id >= 0 ? id : this.fenced.next(epoch);
  }
}

class RackList {
  private readonly racks = new Map<string | null, Rack>();
  /** Sorted: the rack-less brokers' rack first, then by name (Kafka's OptionalStringComparator). */
  private readonly rackNames: (string | null)[];
  private readonly numTotalBrokers: number;
  private readonly numUnfencedBrokers: number;
  /** How many partitions were placed since the last shuffle. */
  private epoch = 0;
  /** The rack the next partition's leader is looked for in first. */
  private offset: number;

  constructor(brokers: readonly UsableBroker[], private readonly random: RandomInt) {
    for (const b of brokers) {
      let rack = this.racks.get(b.rack);
      if (!rack) this.racks.set(b.rack, rack = new Rack());
      (b.fenced ? rack.fenced : rack.unfenced).ids.push(b.id);
    }
    this.rackNames = [...this.racks.keys()].sort(compareRackNames);
    // Kafka draws the racks' random starts in HashMap order; any fixed order is as random.
    for (const name of this.rackNames) {
      const rack = this.racks.get(name)!;
      rack.fenced.initialize(random);
      rack.unfenced.initialize(random);
    }
    this.numTotalBrokers = brokers.length;
    this.numUnfencedBrokers = brokers.filter((b) => !b.fenced).length;
    this.offset = this.rackNames.length === 0 ? 0 : random(this.rackNames.length);
  }

  /** StripedReplicaPlacer's three checks, in its order. */
  replicationFactorError(replicationFactor: number): string | null {
    if (replicationFactor <= 0) {
      return `Invalid replication factor ${replicationFactor}: the replication factor must be positive.`;
    }
    if (this.numUnfencedBrokers === 0) return 'All brokers are currently fenced, or have all their log directories cordoned.';
    if (replicationFactor > this.numTotalBrokers) {
      return `The target replication factor of ${replicationFactor} cannot be reached because only ${this.numTotalBrokers} broker(s) are registered or some brokers have all their log directories cordoned.`;
    }
    return null;
  }

  /** One partition's replicas; the caller has checked the replication factor. */
  place(replicationFactor: number): number[] {
    // With one unfenced broker every epoch hands out the same broker: no need (and no end) to reshuffle.
    if (this.epoch === this.numUnfencedBrokers && this.numUnfencedBrokers > 1) {
      shuffle(this.rackNames, this.random);
      for (const rack of this.racks.values()) {
        shuffle(rack.fenced.ids, this.random);
        shuffle(rack.unfenced.ids, this.random);
      }
      this.epoch = 0;
    }
    if (this.offset === this.rackNames.length) this.offset = 0;

    // The leader: the first unfenced broker found from the starting rack on.
    let leaderRack = this.offset;
    let leader = this.rackAt(leaderRack).unfenced.next(this.epoch);
    while (leader < 0) {
      leaderRack = (leaderRack + 1) % this.rackNames.length;
      leader = this.rackAt(leaderRack).unfenced.next(this.epoch);
    }
    const replicas = [leader];
    // The followers: one rack after another from the starting rack, passing over the leader's
    // rack the first time round, fenced brokers once a rack's unfenced ones are out.
    let rackIndex = this.offset;
    let skipRack = leaderRack;
    while (replicas.length < replicationFactor) {
      let id = -1;
      if (rackIndex === skipRack) skipRack = -1;
      else id = this.rackAt(rackIndex).next(this.epoch);
      rackIndex = (rackIndex + 1) % this.rackNames.length;
      if (id >= 0) replicas.push(id);
    }
    this.epoch++;
    this.offset++;
    return replicas;
  }

  private rackAt(index: number): Rack {
    return this.racks.get(this.rackNames[index]!)!;
  }
}

function compareRackNames(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

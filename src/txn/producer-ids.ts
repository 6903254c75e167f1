/**
 * Durable producer id allocation for InitProducerId (and idempotent producers).
 *
 * Kafka's controller (ProducerIdControlManager) hands out ids in blocks of
 * 1000, the first block being [0, 1000), and persists the end of the last
 * block handed out (ProducerIdsRecord.producerIdsEnd) before anyone uses it.
 * We do the same with one small file, `producer-ids.json` in the data dir:
 *
 *   {"version":1,"producerIdsEnd":2000}
 *
 * written crash-safely (temp file, fsync, rename, fsync of the directory)
 * BEFORE any id of the new block is handed out. After a restart the next id
 * is `producerIdsEnd`: whatever was left of the last block is skipped, so a
 * crash at any point can never hand out an id twice.
 *
 * In a cluster the blocks come from etcd instead (EtcdCluster.reserveProducerIdBlock), so that no
 * two brokers hand out the same id.
 */
import * as fs from 'fs';
import * as path from 'path';
import { writeFileAtomically } from '../common/durable-file';

export const PRODUCER_IDS_FILE = 'producer-ids.json';
/** Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE. */
export const PRODUCER_ID_BLOCK_SIZE = 1000;
const FILE_VERSION = 1;

/** Reserves a block of PRODUCER_ID_BLOCK_SIZE ids no one has had, durably; resolves with its first id. */
export type ProducerIdBlockSource = () => Promise<number>;

export class ProducerIdManager {
  /** The next id to hand out; ids in [next, blockEnd) are reserved and unused. */
  private next = 0;
  private blockEnd = 0;
  /** The block reservation in flight, shared by every caller waiting for it. */
  private reserving: Promise<void> | undefined;

  constructor(private readonly reserve: ProducerIdBlockSource) {}

  /** Blocks from `producer-ids.json` in `dataDir` (creating the directory if needed); a fresh dir starts at id 0. */
  static async open(dataDir: string): Promise<ProducerIdManager> {
    await fs.promises.mkdir(dataDir, { recursive: true });
    const file = path.join(dataDir, PRODUCER_IDS_FILE);
    await fs.promises.rm(file + '.tmp', { force: true }); // a write cut short by a crash
    let persistedEnd = 0;
    try {
      persistedEnd = parseProducerIdsEnd(file, await fs.promises.readFile(file, 'utf8'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    return new ProducerIdManager(async () => {
      const first = persistedEnd;
      const end = first + PRODUCER_ID_BLOCK_SIZE;
      if (end > Number.MAX_SAFE_INTEGER) throw new Error('Exhausted all producer ids');
      await writeFileAtomically(file, JSON.stringify({ version: FILE_VERSION, producerIdsEnd: end }) + '\n');
      persistedEnd = end;
      return first;
    });
  }

  /**
   * A producer id never handed out before, by this process or an earlier one.
   * Resolves at once while the current block lasts; only the first call past a
   * block's end waits for the next block to be on disk, and concurrent callers
   * share that wait and still get distinct ids.
   */
  async nextId(): Promise<number> {
    while (this.next >= this.blockEnd) {
      this.reserving ??= this.reserveBlock().finally(() => {
        this.reserving = undefined;
      });
      await this.reserving;
    }
    return this.next++;
  }

  private async reserveBlock(): Promise<void> {
    const first = await this.reserve();
    this.next = first;
    this.blockEnd = first + PRODUCER_ID_BLOCK_SIZE;
  }
}

function parseProducerIdsEnd(file: string, text: string): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const { version, producerIdsEnd } = (parsed ?? {}) as { version?: unknown; producerIdsEnd?: unknown };
  // Guessing a value here could reuse ids, so a damaged file stops the broker.
  if (version !== FILE_VERSION || !Number.isSafeInteger(producerIdsEnd) || (producerIdsEnd as number) < 0) {
    throw new Error(`${file} is damaged or of an unknown version; refusing to guess the next producer id`);
  }
  return producerIdsEnd as number;
}


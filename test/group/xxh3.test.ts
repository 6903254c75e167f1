// @node-rs/xxhash's XXH3-64 (the consumer groups' metadata hash, KIP-1101) against the reference implementation (libxxhash 0.8's XXH3_64bits, seed 0), over each of
// its length classes: 0, 1-3, 4-8, 9-16, 17-128, 129-240, and longer (one block is 1024 bytes).
import { expect } from 'chai';
import { xxh3 } from '@node-rs/xxhash';

const input = (length: number): Buffer => Buffer.from(Array.from({ length }, (_, i) => (i * 31 + 7) % 256));

describe('xxh3', () => {
  it('hashes as XXH3_64bits does, for every length class', () => {
    const reference: [number, bigint][] = [
      [0, 0x2d06800538d394c2n], [3, 0x15f7093b173d005cn], [7, 0x7561869c23da3c1bn], [12, 0x46aaf92c7550afa4n],
      [50, 0x98eac754de954c04n], [100, 0x8c97158042fbf926n], [200, 0x12fdb864685f344dn], [500, 0xe1e3ce93f69c5043n],
      [1025, 0xc09fdfbc398c7d82n], [3000, 0x6eb4b5bfe14d9786n],
    ];
    for (const [length, hash] of reference) expect(xxh3.xxh64(input(length)), `length ${length}`).to.equal(hash);
  });
});

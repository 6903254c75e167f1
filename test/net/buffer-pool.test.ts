import { expect } from 'chai';
import { BufferPool } from '../../src/net/buffer-pool';

describe('BufferPool', () => {
  it('hands out views of slabs and reuses a slab once it is given back', () => {
    const pool = new BufferPool(1024, 2);
    const a = pool.take(100);
    expect(a.length).to.equal(100);
    expect(a.buffer.byteLength).to.equal(1024);
    pool.give(a);
    expect(pool.idleCount).to.equal(1);
    const b = pool.take(1024);
    expect(b.buffer).to.equal(a.buffer);
    expect(pool.idleCount).to.equal(0);
  });

  it('allocates larger requests outside the pool and takes back only its own slabs, once, up to maxIdle', () => {
    const pool = new BufferPool(1024, 2);
    const big = pool.take(4096);
    expect(big.length).to.equal(4096);
    pool.give(big);
    pool.give(Buffer.alloc(1024));
    expect(pool.idleCount).to.equal(0);
    const [x, y, z] = [pool.take(10), pool.take(10), pool.take(10)];
    pool.give(x);
    pool.give(x);
    expect(pool.idleCount).to.equal(1);
    pool.give(y);
    pool.give(z);
    expect(pool.idleCount).to.equal(2);
  });
});

// Shared by the records tests and the fixture capture tool.
import * as path from 'node:path';

/** test/records/fixtures in the source tree (these files run from dist/test/records). */
export const FIXTURE_DIR = path.resolve(__dirname, '../../../test/records/fixtures');

/** The large value every client sends: ~100 KB of text, more than one LZ4 block (64 KB) and snappy chunk (32 KB). */
export function bigValue(): Buffer {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < 100000; i++) {
    const s = `{"i":${i},"name":"item-${(i * 7919) % 10007}","price":${(i * 31) % 997}.${i % 100},"tags":["a${i % 13}","b${i % 7}"]},`;
    parts.push(s);
    n += s.length;
  }
  return Buffer.from(parts.join('').slice(0, 100000), 'utf8');
}

import { expect } from 'chai';
import { jsonReplacer } from '../../src/admin/json';

describe('admin jsonReplacer', () => {
  it('writes Buffers as base64 wherever they are (JSON.stringify calls their toJSON first)', () => {
    const value = { key: Buffer.from('k1'), nested: [{ value: Buffer.from([0, 255]) }], none: null };
    expect(JSON.parse(JSON.stringify(value, jsonReplacer))).to.deep.equal({ key: 'azE=', nested: [{ value: 'AP8=' }], none: null });
    expect(JSON.stringify(Buffer.from('x'), jsonReplacer)).to.equal('"eA=="');
  });

  it('writes bigints as numbers when exact, else as strings, and Maps as objects', () => {
    const value = { offset: 12n, huge: 2n ** 63n - 1n, m: new Map([['a', 1n]]) };
    expect(JSON.parse(JSON.stringify(value, jsonReplacer))).to.deep.equal({ offset: 12, huge: '9223372036854775807', m: { a: 1 } });
  });
});

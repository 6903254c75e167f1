/**
 * scripts/gen.js: spec parsing rules and failure on specs it cannot handle.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import * as generated from '../../src/protocol/generated';
import { ROOT } from './spec-util';

interface VersionRange {
  lo: number;
  hi: number;
}
interface GenModule {
  stripComments(text: string): string;
  parseVersions(s: string, what: string): VersionRange;
  buildModel(spec: unknown, file: string): { structs: Map<string, { iface: string }> };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const gen = require(path.join(ROOT, 'scripts', 'gen.js')) as GenModule;

function spec(fields: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiKey: 99, type: 'request', name: 'TestRequest', validVersions: '0-3', flexibleVersions: '2+', fields, ...extra };
}

describe('code generator (scripts/gen.js)', () => {
  it('strips // comments but not // inside strings', () => {
    const text = '// header\n{ "a": "http://x//y", // trailing\n  "b": "q\\"//" }\n';
    expect(JSON.parse(gen.stripComments(text))).to.deep.equal({ a: 'http://x//y', b: 'q"//' });
  });

  it('parses version ranges', () => {
    expect(gen.parseVersions('3+', 'x')).to.deep.equal({ lo: 3, hi: 0x7fff });
    expect(gen.parseVersions('1-4', 'x')).to.deep.equal({ lo: 1, hi: 4 });
    expect(gen.parseVersions('5', 'x')).to.deep.equal({ lo: 5, hi: 5 });
    const none = gen.parseVersions('none', 'x');
    expect(none.lo > none.hi).to.equal(true);
    expect(() => gen.parseVersions('x+', 'x')).to.throw(/invalid version range/);
  });

  it('names nested structs <Message><Struct> unless the struct name already starts with the message name', () => {
    const m = gen.buildModel(
      spec([
        { name: 'Topics', type: '[]TopicData', versions: '0+', fields: [{ name: 'Name', type: 'string', versions: '0+' }] },
        { name: 'Other', type: 'TestRequestThing', versions: '0+', fields: [{ name: 'X', type: 'int32', versions: '0+' }] },
      ]),
      'test',
    );
    expect([...m.structs.values()].map((s) => s.iface)).to.deep.equal(['TestRequestTopicData', 'TestRequestThing']);
    // the same rule, as seen in the generated code (compile-time checks)
    const a: generated.ProduceRequestTopicProduceData = { name: 't', partitionData: [] };
    const b: generated.MetadataResponseBroker = { nodeId: 1, host: 'h', port: 1 };
    expect(a.name + b.host).to.equal('th');
  });

  it('refuses specs it cannot handle faithfully', () => {
    const bad: [unknown, RegExp][] = [
      [spec([{ name: 'A', type: 'int32', versions: '0+', weird: true }]), /unsupported field key weird/],
      [spec([{ name: 'A', type: 'int32', versions: '0+' }], { surprise: 1 }), /unsupported top-level key/],
      [spec([{ name: 'A', type: 'int32', versions: '0+', tag: 0 }]), /tag without taggedVersions/],
      [spec([{ name: 'A', type: 'int32', versions: '0+', tag: 0, taggedVersions: '0+' }]), /tagged in non-flexible versions/],
      [spec([{ name: 'A', type: 'string', versions: '0+', default: 'null' }]), /default null on non-nullable/],
      [spec([{ name: 'A', type: 'int32', versions: '0+', nullableVersions: '0+' }]), /cannot be nullable/],
      [spec([{ name: 'A', type: '[]Missing', versions: '0+' }]), /unknown struct type Missing/],
      [spec([{ name: 'A', type: 'int8', versions: '0+', default: '300' }]), /out of range/],
      [spec([{ name: 'A', type: 'int32', versions: '0+', flexibleVersions: 'none' }]), /flexibleVersions override/],
      [
        spec([
          { name: 'A', type: 'int32', versions: '2+', tag: 0, taggedVersions: '2+' },
          { name: 'B', type: 'int32', versions: '2+', tag: 0, taggedVersions: '2+' },
        ]),
        /duplicate tag/,
      ],
    ];
    for (const [s, re] of bad) expect(() => gen.buildModel(s, 'test'), String(re)).to.throw(re);
  });

  it('accepts hex and negative defaults', () => {
    expect(() =>
      gen.buildModel(
        spec([
          { name: 'A', type: 'int32', versions: '0+', default: '0x7fffffff' },
          { name: 'B', type: 'int64', versions: '0+', default: '-1' },
          { name: 'C', type: 'int32', versions: '0+', default: '-2147483648' },
        ]),
        'test',
      ),
    ).not.to.throw();
  });

  it('imports in each generated file only what the file uses (noUnusedLocals holds there)', () => {
    const dir = path.join(ROOT, 'src', 'protocol', 'generated');
    const unused: string[] = [];
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      for (const m of text.matchAll(/^import (?:type )?\{ ([^}]+) \} from/gm)) {
        for (const name of m[1].split(',').map((n) => n.trim().replace(/^type /, ''))) {
          const uses = text.match(new RegExp(`\\b${name}\\b`, 'g'))?.length ?? 0;
          if (uses < 2) unused.push(`${file}: ${name}`);
        }
      }
    }
    expect(unused).to.deep.equal([]);
  });
});

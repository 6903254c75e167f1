import { expect } from 'chai';
import { formatProperties, parseProperties, PropertiesParseError } from '../../src/config/properties';

describe('config/properties', () => {
  const obj = (text: string) => Object.fromEntries(parseProperties(text));

  it('reads key=value, key:value and key value, ignoring # and ! comments and blank lines', () => {
    const text = [
      '# a comment',
      '! another comment',
      '',
      '   ',
      'a=1',
      'b:2',
      'c 3',
      '  d  =  4  ',
      'e\t:\tfive',
      'f',
      'g=',
    ].join('\n');
    expect(obj(text)).to.deep.equal({ a: '1', b: '2', c: '3', d: '4  ', e: 'five', f: '', g: '' });
  });

  it('handles CRLF and CR line endings and a byte-order mark', () => {
    expect(obj('\ufeffa=1\r\nb=2\rc=3')).to.deep.equal({ a: '1', b: '2', c: '3' });
  });

  it('joins continuation lines and drops leading whitespace of the continued line', () => {
    const text = 'listeners=PLAINTEXT://:9092,\\\n    CONTROLLER://:9093\nnext=ok';
    expect(obj(text)).to.deep.equal({ listeners: 'PLAINTEXT://:9092,CONTROLLER://:9093', next: 'ok' });
  });

  it('an even number of trailing backslashes is not a continuation', () => {
    expect(obj('a=x\\\\\nb=y')).to.deep.equal({ a: 'x\\', b: 'y' });
  });

  it('a comment line never continues', () => {
    expect(obj('# comment \\\na=1')).to.deep.equal({ a: '1' });
  });

  it('unescapes \\t \\n \\r \\f, \\uXXXX and escaped separators in keys and values', () => {
    expect(obj('k\\=x\\:y\\ z=v\\tw\\nx\\u0041\\#\\!')).to.deep.equal({ 'k=x:y z': 'v\tw\nxA#!' });
  });

  it('only the first separator counts: later = and : belong to the value', () => {
    expect(obj('url = http://host:1/a=b')).to.deep.equal({ url: 'http://host:1/a=b' });
    expect(obj('key value=with=equals')).to.deep.equal({ key: 'value=with=equals' });
  });

  it('the last duplicate wins', () => {
    expect(obj('a=1\na=2')).to.deep.equal({ a: '2' });
  });

  it('rejects a malformed \\u escape', () => {
    expect(() => parseProperties('a=\\u12G4')).to.throw(PropertiesParseError, /Malformed \\uxxxx encoding/);
  });

  it('formats entries that parse back to the same values', () => {
    const entries: [string, string][] = [
      ['cluster.id', 'AbC-_123'],
      ['weird key:=', ' leading space, #hash !bang\ttab\nnewline é'],
    ];
    const text = formatProperties(entries, ['', 'comment']);
    expect(text.startsWith('#\n#comment\n')).to.equal(true);
    expect([...parseProperties(text)]).to.deep.equal(entries);
  });
});

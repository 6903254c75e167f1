// compileRe2Pattern: patterns as Kafka's RE2/J reads them.
import { expect } from 'chai';
import { Re2SyntaxError, compileRe2Pattern } from '../../src/common/re2-pattern';

describe('compileRe2Pattern', () => {
  const matches = (pattern: string, text: string) => compileRe2Pattern(pattern).matches(text);
  const refusal = (pattern: string) => {
    try {
      compileRe2Pattern(pattern);
    } catch (e) {
      expect(e, pattern).to.be.instanceOf(Re2SyntaxError);
      return (e as Error).message;
    }
    return null;
  };

  it('matches whole strings only, as Kafka\'s matcher().matches()', () => {
    expect(matches('orders-.*', 'orders-eu')).to.equal(true);
    expect(matches('orders', 'orders-eu')).to.equal(false);
    expect(matches('a|b', 'ab')).to.equal(false);
    expect(matches('a|b', 'b')).to.equal(true);
  });

  it('reads RE2 syntax JavaScript lacks: named groups, inline flags anywhere, POSIX and Unicode classes, \\Q..\\E', () => {
    expect(matches('(?P<region>eu|us)-\\d+', 'us-42')).to.equal(true);
    expect(matches('(?i)ORDERS', 'orders')).to.equal(true);
    expect(matches('a(?i)b', 'aB')).to.equal(true);
    expect(matches('(?s)a.b', 'a\nb')).to.equal(true);
    expect(matches('a.b', 'a\nb')).to.equal(false);
    expect(matches('[[:alpha:]]+', 'abc')).to.equal(true);
    expect(matches('\\pL+', 'äbc')).to.equal(true);
    expect(matches('\\Qa.b\\E', 'a.b')).to.equal(true);
    expect(matches('\\Qa.b\\E', 'axb')).to.equal(false);
  });

  it('matches in linear time where a backtracking engine would not', () => {
    const start = Date.now();
    expect(matches('(a+)+b', `${'a'.repeat(5000)}c`)).to.equal(false);
    expect(Date.now() - start).to.be.below(2000);
  });

  it('refuses what RE2/J refuses, with its messages', () => {
    expect(refusal('a(')).to.equal('error parsing regexp: missing closing ): `a(`');
    expect(refusal('(?=a)a')).to.equal('error parsing regexp: invalid or unsupported Perl syntax: `(?=`');
    expect(refusal('(a)\\1')).to.equal('error parsing regexp: invalid escape sequence: `\\1`');
    expect(refusal('a{2000}')).to.equal('error parsing regexp: invalid repeat count: `{2000}`');
    for (const pattern of ['(?!a).', '(?<=a)b', '[a', '*a']) expect(refusal(pattern), pattern).to.be.a('string');
  });
});

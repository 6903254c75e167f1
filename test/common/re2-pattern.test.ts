// compileRe2Pattern: RE2/J's reading of a pattern, on JavaScript's RegExp.
import { expect } from 'chai';
import { compileRe2Pattern } from '../../src/common/re2-pattern';

describe('compileRe2Pattern', () => {
  const matches = (pattern: string, text: string) => compileRe2Pattern(pattern)!.test(text);

  it('matches whole strings only, as Kafka\'s matcher().matches()', () => {
    expect(matches('orders-.*', 'orders-eu')).to.equal(true);
    expect(matches('orders', 'orders-eu')).to.equal(false);
    expect(matches('a|b', 'ab'), 'alternation is grouped before anchoring').to.equal(false);
    expect(matches('a|b', 'b')).to.equal(true);
  });

  it('reads RE2\'s named groups and leading flags', () => {
    expect(matches('(?P<region>eu|us)-\\d+', 'us-42')).to.equal(true);
    expect(matches('(?i)ORDERS', 'orders')).to.equal(true);
    expect(matches('(?s)a.b', 'a\nb')).to.equal(true);
    expect(matches('a.b', 'a\nb')).to.equal(false);
  });

  it('keeps brackets, escapes and parentheses inside classes literal', () => {
    expect(matches('[(?=]+', '(?=')).to.equal(true);
    expect(matches('[]a]+', ']a]')).to.equal(true);
    expect(matches('\\(\\?=x\\)', '(?=x)')).to.equal(true);
    expect(matches('[\\1]', '\u0001')).to.equal(true);
  });

  it('refuses a repeated group holding a repetition or an alternation, which could backtrack for ever', () => {
    for (const pattern of ['(a+)+b', '(a|aa)*c', '(.*)*', '((ab)*)+', '(?:x|y){2,}', '(?P<n>\\d+)*']) {
      expect(compileRe2Pattern(pattern), pattern).to.equal(null);
    }
    expect(matches('(ab)+', 'abab')).to.equal(true);
    expect(matches('(orders|payments)-\\d+', 'payments-7')).to.equal(true);
    expect(matches('(a*)?b', 'aab')).to.equal(true);
    expect(matches('x{2,3}', 'xxx')).to.equal(true);
    expect(matches('[(a+)]+', '(a+)')).to.equal(true);
  });

  it('refuses what RE2/J refuses: lookaround, backreferences, bad syntax; and inline flags it cannot translate', () => {
    for (const pattern of ['(?=a)a', '(?!a).', '(?<=a)b', '(?<!a)b', '(a)\\1', '(?<n>a)\\k<n>', 'a(', '[a', '*a', 'a(?i)b', '(?U)a']) {
      expect(compileRe2Pattern(pattern), pattern).to.equal(null);
    }
  });
});

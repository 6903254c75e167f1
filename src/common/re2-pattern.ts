// Regular expressions as Kafka compiles them with RE2/J (com.google.re2j.Pattern) and applies them
// with matches(): the whole string must match. Built on JavaScript's RegExp, which differs from RE2:
// - RE2 has no backreferences (\1, \k<name>) or lookaround ((?=, (?!, (?<=, (?<!): refused here too;
// - RE2 spells named groups (?P<name>...) (also (?<name>...)): translated to JavaScript's form;
// - RE2 takes flags at the start, (?i) or (?s) or (?m): turned into RegExp flags; other inline
//   flags (in the middle, (?U), (?i:...)) are refused, which RE2/J would accept;
// - JavaScript (without the u flag) takes escapes RE2 refuses, such as \q for q: accepted here.

const LOOKAROUND = /^\?(?:=|!|<=|<!)/;
const LEADING_FLAGS = /^\(\?([ism]+)\)/;

/** The pattern as a RegExp matching whole strings, or null where RE2/J would refuse it (as far as told above). */
export function compileRe2Pattern(pattern: string): RegExp | null {
  const leading = LEADING_FLAGS.exec(pattern);
  const flags = leading ? [...new Set(leading[1])].join('') : '';
  const body = leading ? pattern.slice(leading[0].length) : pattern;
  let source = '';
  let inClass = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') {
      const next = body[i + 1] ?? '';
      if (!inClass && (/[1-9]/.test(next) || next === 'k')) return null;
      source += c + next;
      i++;
    } else if (inClass) {
      source += c;
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
      source += c;
      // a ] first in a class (after an optional ^) is a literal, as in RE2
      if (body[i + 1] === '^') source += body[++i];
      if (body[i + 1] === ']') source += '\\' + body[++i];
    } else if (c === '(' && body[i + 1] === '?') {
      const rest = body.slice(i + 1);
      if (LOOKAROUND.test(rest)) return null;
      if (rest.startsWith('?P<')) {
        source += '(?<';
        i += 3;
      } else if (rest.startsWith('?<') || rest.startsWith('?:')) {
        source += c;
      } else {
        return null; // an inline flag group
      }
    } else {
      source += c;
    }
  }
  try {
    return new RegExp(`^(?:${source})$`, flags);
  } catch {
    return null;
  }
}

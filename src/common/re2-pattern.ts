// Regular expressions as Kafka compiles them with RE2/J (com.google.re2j.Pattern) and applies them
// with matches(): the whole string must match. Built on JavaScript's RegExp, which differs from RE2:
// - RE2 has no backreferences (\1, \k<name>) or lookaround ((?=, (?!, (?<=, (?<!): refused here too;
// - RE2 spells named groups (?P<name>...) (also (?<name>...)): translated to JavaScript's form;
// - RE2 takes flags at the start, (?i) or (?s) or (?m): turned into RegExp flags; other inline
//   flags (in the middle, (?U), (?i:...)) are refused, which RE2/J would accept;
// - JavaScript (without the u flag) takes escapes RE2 refuses, such as \q for q: accepted here;
// - RE2 matches in linear time; RegExp backtracks, and a repeated group holding a repetition or an
//   alternation ((a+)+, (a|aa)*) can take exponential time on a hostile string, stalling the event
//   loop: such patterns are refused here, which RE2/J would accept.

const LOOKAROUND = /^\?(?:=|!|<=|<!)/;
const LEADING_FLAGS = /^\(\?([ism]+)\)/;
/** What repeats the atom before it without bound (? and {0,1} repeat at most once: no blow-up). */
const REPETITION = /^(?:[*+]|\{\d*,\d*\}|\{\d{2,}\})/;

/** The pattern as a RegExp matching whole strings, or null where it is refused (see above). */
export function compileRe2Pattern(pattern: string): RegExp | null {
  const leading = LEADING_FLAGS.exec(pattern);
  const flags = leading ? [...new Set(leading[1])].join('') : '';
  const body = leading ? pattern.slice(leading[0].length) : pattern;
  let source = '';
  let inClass = false;
  // For each open group, whether it holds a repetition or an alternation; for a group just closed, the same.
  const groups: boolean[] = [];
  let closedGroupRepeats = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    const justClosed = closedGroupRepeats;
    closedGroupRepeats = false;
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
    } else if (c === '(') {
      if (body[i + 1] === '?') {
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
      groups.push(false);
    } else if (c === ')') {
      source += c;
      closedGroupRepeats = groups.pop() ?? false;
      if (closedGroupRepeats && groups.length > 0) groups[groups.length - 1] = true;
    } else {
      const repetition = REPETITION.exec(body.slice(i));
      if (repetition) {
        if (justClosed) return null;
        if (groups.length > 0) groups[groups.length - 1] = true;
        source += repetition[0];
        i += repetition[0].length - 1;
      } else {
        if (c === '|' && groups.length > 0) groups[groups.length - 1] = true;
        source += c;
      }
    }
  }
  try {
    return new RegExp(`^(?:${source})$`, flags);
  } catch {
    return null;
  }
}

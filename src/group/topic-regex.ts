// SubscribedTopicRegex as Kafka reads it: an RE2/J pattern (com.google.re2j) that must match the
// whole topic name. JavaScript's RegExp is a backtracking engine with another syntax, so the
// pattern is translated, and what RE2 refuses is refused here too:
// - refused by RE2: lookarounds ((?=, (?!, (?<=, (?<!), backreferences (\1, \k<name>), possessive
//   and atomic forms ((?>, a++), repeat counts above 1000;
// - RE2 syntax JavaScript lacks: leading inline flags ((?i), (?s), (?m)), \Q...\E literals, (?P<name>,
//   POSIX classes ([[:alpha:]]), one-letter Unicode classes (\pL), \A and \z;
// - escaped punctuation (\- \# \! ...), which RE2 allows anywhere and JavaScript's unicode mode
//   does not, becomes a \x escape.

/** Its message is RE2's description of the error, as Kafka quotes it. */
export class InvalidRegexError extends Error {}

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z', alpha: 'A-Za-z', ascii: '\\x00-\\x7f', blank: '\\t ', cntrl: '\\x00-\\x1f\\x7f',
  digit: '0-9', graph: '!-~', lower: 'a-z', print: ' -~', punct: '!-\\/:-@\\[-`{-~', space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z', word: '0-9A-Za-z_', xdigit: '0-9A-Fa-f',
};

const MAX_REPEAT = 1000;

/** RE2's descriptions (what Kafka's message quotes) of the errors JavaScript finds. */
const JS_ERRORS: [RegExp, string][] = [
  [/Unterminated group/, 'missing closing )'],
  [/Unmatched '\)'/, 'unexpected )'],
  [/Nothing to repeat/, 'missing argument to repetition operator'],
  [/Unterminated character class/, 'missing closing ]'],
  [/Range out of order/, 'invalid character class range'],
  [/Invalid escape|Invalid Unicode escape|Invalid property name/, 'invalid escape sequence'],
  [/numbers out of order/, 'invalid repeat count'],
];

const hex = (c: string): string => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
const literal = (s: string): string => [...s].map((c) => (/[A-Za-z0-9_]/.test(c) ? c : c.charCodeAt(0) < 0x80 ? hex(c) : c)).join('');

/** The JavaScript RegExp matching exactly the topic names the RE2/J pattern matches; throws InvalidRegexError. */
export function compileTopicRegex(pattern: string): RegExp {
  let flags = 'u';
  let source = pattern;
  const leading = /^\(\?([imsU]+)\)/.exec(source);
  if (leading) {
    if (leading[1].includes('U')) throw new InvalidRegexError('invalid or unsupported Perl syntax');
    flags += [...new Set(leading[1])].join('');
    source = source.slice(leading[0].length);
  }
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const n = source[i + 1];
      if (n === undefined) throw new InvalidRegexError('trailing backslash at end of expression');
      if (n === 'Q') {
        const end = source.indexOf('\\E', i + 2);
        out += literal(source.slice(i + 2, end === -1 ? undefined : end));
        i = end === -1 ? source.length : end + 1;
        continue;
      }
      if (/[1-9]/.test(n) || n === 'k') throw new InvalidRegexError('invalid escape sequence');
      if ((n === 'p' || n === 'P') && source[i + 2] !== undefined && source[i + 2] !== '{') {
        // RE2's one-letter Unicode class (\pL) is \p{L} to JavaScript.
        out += `\\${n}{${source[i + 2]}}`;
        i += 2;
        continue;
      }
      if (n === 'A' && !inClass) out += '^';
      else if (n === 'z' && !inClass) out += '$';
      else if (/[^A-Za-z0-9]/.test(n) && n.charCodeAt(0) < 0x80) out += hex(n);
      else out += c + n;
      i++;
      continue;
    }
    if (inClass) {
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(source.slice(i));
      if (posix) {
        const range = POSIX_CLASSES[posix[2]];
        if (range === undefined || posix[1] === '^') throw new InvalidRegexError('invalid character class range');
        out += range;
        i += posix[0].length - 1;
        continue;
      }
      if (c === ']') inClass = false;
      out += c === '[' ? '\\[' : c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal in RE2.
      const negated = source[i + 1] === '^';
      if (negated) out += source[++i];
      if (source[i + 1] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (c === '(' && source[i + 1] === '?') {
      const rest = source.slice(i + 2);
      if (rest.startsWith('P<')) {
        out += '(?<';
        i += 3;
        continue;
      }
      if (/^(=|!|<=|<!|>)/.test(rest)) throw new InvalidRegexError('invalid or unsupported Perl syntax');
      if (!rest.startsWith(':') && !rest.startsWith('<')) throw new InvalidRegexError('invalid or unsupported Perl syntax');
    }
    if ((c === '+' || c === '*' || c === '?') && source[i + 1] === '+') {
      throw new InvalidRegexError('invalid nested repetition operator');
    }
    if (c === '{' || c === '}') {
      // A repeat count, or else (RE2 reads it so) a literal brace.
      const repeat = c === '{' ? /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(i)) : null;
      if (!repeat) {
        out += `\\${c}`;
        continue;
      }
      if (Number(repeat[1]) > MAX_REPEAT || Number(repeat[2] || 0) > MAX_REPEAT) {
        throw new InvalidRegexError('invalid repeat count');
      }
      if (source[i + repeat[0].length] === '+') throw new InvalidRegexError('invalid nested repetition operator');
      out += repeat[0];
      i += repeat[0].length - 1;
      continue;
    }
    out += c;
  }
  try {
    return new RegExp(`^(?:${out})$`, flags);
  } catch (err) {
    const jsError = (err as Error).message;
    throw new InvalidRegexError(JS_ERRORS.find(([pattern]) => pattern.test(jsError))?.[1] ?? 'invalid regular expression');
  }
}

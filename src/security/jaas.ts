// The JAAS configuration text of `sasl.jaas.config` (and its listener/mechanism-prefixed forms), read
// as Kafka's JaasConfig reads it with java.io.StreamTokenizer:
//   <LoginModuleClass> <flag> [key=value ...];
// Words are letters, digits and - _ $ . ; values are words or quoted strings ("..." or '...') with
// StreamTokenizer's escapes (\n \t \r \b \f \a \v, octal \ooo, and \x for any other x); // and /* */
// comments are skipped. The errors carry Kafka's texts.
import { ConfigError } from '../config/definitions';

export type JaasControlFlag = 'required' | 'requisite' | 'sufficient' | 'optional';

export interface JaasLoginModule {
  readonly loginModule: string;
  readonly controlFlag: JaasControlFlag;
  /** Option names to values, in the order given. */
  readonly options: ReadonlyMap<string, string>;
}

const FLAGS: readonly JaasControlFlag[] = ['required', 'requisite', 'sufficient', 'optional'];

type Token = { kind: 'word' | 'quoted'; text: string } | { kind: 'char'; text: string } | { kind: 'eof'; text: '' };

function isWordChar(c: string): boolean {
  return /[A-Za-z0-9_$.-]/.test(c) || c.charCodeAt(0) >= 128;
}

class Tokenizer {
  private i = 0;
  constructor(private readonly s: string) {}

  next(): Token {
    const s = this.s;
    for (;;) {
      while (this.i < s.length && s.charCodeAt(this.i) <= 32) this.i++;
      if (s.startsWith('//', this.i)) {
        const nl = s.indexOf('\n', this.i);
        this.i = nl < 0 ? s.length : nl + 1;
        continue;
      }
      if (s.startsWith('/*', this.i)) {
        const end = s.indexOf('*/', this.i + 2);
        this.i = end < 0 ? s.length : end + 2;
        continue;
      }
      break;
    }
    if (this.i >= s.length) return { kind: 'eof', text: '' };
    const c = s[this.i];
    if (c === '"' || c === "'") return { kind: 'quoted', text: this.quoted(c) };
    if (isWordChar(c)) {
      const start = this.i;
      while (this.i < s.length && isWordChar(s[this.i])) this.i++;
      return { kind: 'word', text: s.slice(start, this.i) };
    }
    this.i++;
    return { kind: 'char', text: c };
  }

  /** A quoted string: to the closing quote or the end of the line, as StreamTokenizer reads it. */
  private quoted(quote: string): string {
    const s = this.s;
    let out = '';
    this.i++;
    while (this.i < s.length && s[this.i] !== quote && s[this.i] !== '\n' && s[this.i] !== '\r') {
      let c = s[this.i++];
      if (c === '\\' && this.i < s.length) {
        c = s[this.i++];
        const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };
        if (c in simple) {
          c = simple[c];
        } else if (c >= '0' && c <= '7') {
          // Up to three octal digits, the first at most 3 when there are three.
          let n = c.charCodeAt(0) - 48;
          const max = c <= '3' ? 2 : 1;
          for (let k = 0; k < max && this.i < s.length && s[this.i] >= '0' && s[this.i] <= '7'; k++) {
            n = n * 8 + (s.charCodeAt(this.i++) - 48);
          }
          c = String.fromCharCode(n);
        }
      }
      out += c;
    }
    if (s[this.i] === quote) this.i++;
    return out;
  }
}

/** Every login module of a JAAS configuration text. */
export function parseJaasConfig(text: string): JaasLoginModule[] {
  const t = new Tokenizer(text);
  const modules: JaasLoginModule[] = [];
  for (let tok = t.next(); tok.kind !== 'eof'; tok = t.next()) {
    if (tok.kind !== 'word') throw new ConfigError(`Invalid JAAS config: unexpected '${tok.text}' where a login module name was expected`);
    const loginModule = tok.text;
    const flagTok = t.next();
    if (flagTok.kind !== 'word') throw new ConfigError('Login module control flag not specified in JAAS config');
    const controlFlag = flagTok.text.toLowerCase() as JaasControlFlag;
    if (!FLAGS.includes(controlFlag)) throw new ConfigError(`Invalid login module control flag '${flagTok.text}' in JAAS config`);
    const options = new Map<string, string>();
    for (tok = t.next(); !(tok.kind === 'char' && tok.text === ';'); tok = t.next()) {
      if (tok.kind === 'eof') throw new ConfigError('JAAS config entry not terminated by semi-colon');
      if (tok.kind !== 'word') throw new ConfigError(`Invalid JAAS config: unexpected '${tok.text}' where an option name was expected`);
      const key = tok.text;
      const eq = t.next();
      const value = t.next();
      if (eq.kind !== 'char' || eq.text !== '=' || (value.kind !== 'word' && value.kind !== 'quoted')) {
        throw new ConfigError(`Value not specified for key '${key}' in JAAS config`);
      }
      options.set(key, value.text);
    }
    modules.push({ loginModule, controlFlag, options });
  }
  return modules;
}

/** A `sasl.jaas.config` value: exactly one login module, as Kafka requires of the property. */
export function parseJaasConfigProperty(text: string, key = 'sasl.jaas.config'): JaasLoginModule {
  const modules = parseJaasConfig(text);
  if (modules.length === 0) throw new ConfigError(`JAAS config property does not contain any login modules (${key})`, key);
  if (modules.length > 1) {
    throw new ConfigError(`JAAS config property contains ${modules.length} login modules, should be 1 module (${key})`, key);
  }
  return modules[0];
}

/**
 * Java `.properties` reader/writer, following java.util.Properties#load:
 *
 *  - a logical line may span several natural lines: a line ending in an odd
 *    number of backslashes continues on the next one, whose leading
 *    whitespace is dropped;
 *  - lines whose first non-blank character is `#` or `!` are comments
 *    (a comment never continues onto the next line);
 *  - the key runs up to the first unescaped `=`, `:` or whitespace; then
 *    whitespace, at most one `=`/`:`, and more whitespace are skipped; the
 *    rest of the line is the value (trailing whitespace is kept);
 *  - escapes: \t \n \r \f, \uXXXX, and `\x` for any other x means x;
 *  - a later duplicate key replaces the earlier value.
 *
 * Deviation: files are decoded as UTF-8 (Java's Properties#load(InputStream)
 * uses ISO-8859-1); an ASCII file reads the same either way.
 */
import * as fs from 'fs';

const WS = new Set([' ', '\t', '\f']);

export class PropertiesParseError extends Error {
  constructor(message: string, readonly line: number) {
    super(message);
    this.name = 'PropertiesParseError';
  }
}

interface LogicalLine {
  text: string;
  /** 1-based number of the natural line the logical line starts on. */
  line: number;
}

function logicalLines(text: string): LogicalLine[] {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // byte-order mark
  const natural = text.split(/\r\n|\r|\n/);
  const out: LogicalLine[] = [];
  let i = 0;
  while (i < natural.length) {
    const start = i;
    let line = stripLeading(natural[i]);
    i++;
    if (line === '' || line[0] === '#' || line[0] === '!') continue;
    let acc = '';
    for (;;) {
      if (!endsWithContinuation(line)) {
        acc += line;
        break;
      }
      acc += line.slice(0, -1);
      if (i >= natural.length) break; // continuation at end of file: dropped
      line = stripLeading(natural[i]);
      i++;
    }
    out.push({ text: acc, line: start + 1 });
  }
  return out;
}

function stripLeading(s: string): string {
  let k = 0;
  while (k < s.length && WS.has(s[k])) k++;
  return s.slice(k);
}

function endsWithContinuation(s: string): boolean {
  let n = 0;
  for (let k = s.length - 1; k >= 0 && s[k] === '\\'; k--) n++;
  return n % 2 === 1;
}

function unescape(s: string, line: number): string {
  if (s.indexOf('\\') < 0) return s;
  let out = '';
  for (let k = 0; k < s.length; k++) {
    const c = s[k];
    if (c !== '\\') {
      out += c;
      continue;
    }
    k++;
    if (k >= s.length) break;
    const e = s[k];
    switch (e) {
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        const hex = s.slice(k + 1, k + 5);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
          throw new PropertiesParseError(`Malformed \\uxxxx encoding on line ${line}`, line);
        }
        out += String.fromCharCode(parseInt(hex, 16));
        k += 4;
        break;
      }
      default: out += e;
    }
  }
  return out;
}

/** Parses properties text into an insertion-ordered Map (last duplicate wins). */
export function parseProperties(text: string): Map<string, string> {
  const result = new Map<string, string>();
  for (const { text: l, line } of logicalLines(text)) {
    let k = 0;
    let keyEnd = -1;
    let valueStart = l.length;
    let hasSep = false;
    while (k < l.length) {
      const c = l[k];
      if (c === '\\') {
        k += 2;
        continue;
      }
      if (c === '=' || c === ':') {
        keyEnd = k;
        valueStart = k + 1;
        hasSep = true;
        break;
      }
      if (WS.has(c)) {
        keyEnd = k;
        valueStart = k + 1;
        break;
      }
      k++;
    }
    if (keyEnd < 0) keyEnd = Math.min(k, l.length);
    let v = valueStart;
    while (v < l.length && WS.has(l[v])) v++;
    if (!hasSep && v < l.length && (l[v] === '=' || l[v] === ':')) {
      v++;
      while (v < l.length && WS.has(l[v])) v++;
    }
    const key = unescape(l.slice(0, keyEnd), line);
    const value = unescape(l.slice(v), line);
    result.delete(key); // keep insertion order of the final occurrence
    result.set(key, value);
  }
  return result;
}

/** Reads and parses a properties file (UTF-8). */
export function readPropertiesFile(path: string): Map<string, string> {
  return parseProperties(fs.readFileSync(path, 'utf8'));
}

function escape(s: string, isKey: boolean): string {
  let out = '';
  for (let k = 0; k < s.length; k++) {
    const c = s[k];
    const code = s.charCodeAt(k);
    switch (c) {
      case ' ':
        out += k === 0 || isKey ? '\\ ' : ' ';
        break;
      case '\t': out += '\\t'; break;
      case '\n': out += '\\n'; break;
      case '\r': out += '\\r'; break;
      case '\f': out += '\\f'; break;
      case '\\': case '=': case ':': case '#': case '!':
        out += '\\' + c;
        break;
      default:
        if (code < 0x20 || code > 0x7e) out += '\\u' + code.toString(16).toUpperCase().padStart(4, '0');
        else out += c;
    }
  }
  return out;
}

/** Formats entries as properties text (Properties#store style, ASCII-only, one entry a line). */
export function formatProperties(
  entries: Iterable<[string, string]> | Record<string, string>,
  comments: string[] = [],
): string {
  const list: Iterable<[string, string]> =
    Symbol.iterator in Object(entries) ? (entries as Iterable<[string, string]>) : Object.entries(entries);
  let out = '';
  for (const c of comments) out += '#' + c.replace(/[\r\n]+/g, ' ') + '\n';
  for (const [k, v] of list) out += `${escape(k, true)}=${escape(v, false)}\n`;
  return out;
}

// ssl.principal.mapping.rules, as Kafka's SslPrincipalMapper reads and applies them: a comma list of
// `DEFAULT` (the distinguished name as it is) and `RULE:pattern/replacement/[LU]` (when the pattern
// matches the whole name, every match is replaced, then lower- or upper-cased); the first rule that
// applies gives the principal name. Patterns are Java regular expressions run as JavaScript ones
// (the same for the usual anchors, groups and classes); `\/` escapes a slash, `$n` names a group.
import { ConfigError } from '../config/broker-config';

const RULE_PATTERN = String.raw`(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`;
const RULE_SPLITTER = new RegExp(String.raw`\s*(` + RULE_PATTERN + String.raw`)\s*(,\s*|$)`, 'g');
const RULE_PARSER = new RegExp(`^(?:${RULE_PATTERN})`);

interface Rule {
  /** Null for DEFAULT. */
  readonly pattern: string | null;
  readonly replacement: string;
  readonly caseChange: 'L' | 'U' | '';
}

export class SslPrincipalMapper {
  private readonly rules: Rule[];

  /** Throws ConfigError (on ssl.principal.mapping.rules) for a rule Kafka refuses. */
  constructor(rules: string) {
    this.rules = [];
    for (const m of rules.trim().matchAll(RULE_SPLITTER)) {
      const rule = m[1];
      const parsed = RULE_PARSER.exec(rule);
      if (!parsed) throw new ConfigError(`Invalid rule: ${rule}`, 'ssl.principal.mapping.rules', rules);
      if (parsed[0].length !== rule.length) {
        throw new ConfigError(`Invalid rule: \`${rule}\`, unmatched substring: \`${rule.slice(parsed[0].length)}\``, 'ssl.principal.mapping.rules', rules);
      }
      // Empty rules are skipped, as Kafka's.
      if (parsed[1] !== undefined) this.rules.push({ pattern: null, replacement: '', caseChange: '' });
      else if (parsed[2] !== undefined) {
        const pattern = parsed[2];
        try {
          new RegExp(pattern);
        } catch (e) {
          throw new ConfigError(`Invalid rule: ${rule} (${(e as Error).message})`, 'ssl.principal.mapping.rules', rules);
        }
        this.rules.push({ pattern, replacement: parsed[4], caseChange: parsed[6] as Rule['caseChange'] });
      }
    }
  }

  /** The principal name for a distinguished name (RFC 2253); null when no rule applies (Kafka refuses the connection). */
  getName(distinguishedName: string): string | null {
    for (const r of this.rules) {
      const name = applyRule(r, distinguishedName);
      if (name !== null) return name;
    }
    return null;
  }

  /** As Kafka prints a mapper (its tests compare these). */
  toString(): string {
    const shown = this.rules.map((r) => {
      if (r.pattern === null) return 'DEFAULT';
      return `RULE:${r.pattern}/${r.replacement}${r.caseChange === '' ? '' : `/${r.caseChange}`}`;
    });
    return `SslPrincipalMapper(rules = [${shown.join(', ')}])`;
  }
}

function applyRule(rule: Rule, dn: string): string | null {
  if (rule.pattern === null) return dn;
  if (!new RegExp(`^(?:${rule.pattern})$`).test(dn)) return null;
  const result = dn.replace(new RegExp(rule.pattern, 'g'), javaReplacement(rule.replacement));
  if (rule.caseChange === 'L') return result.toLowerCase();
  if (rule.caseChange === 'U') return result.toUpperCase();
  return result;
}

/**
 * A Java replacement string in JavaScript's form: `\x` is a literal x, `$n` a group (a group past the
 * last stays literal text in both).
 */
function javaReplacement(java: string): string {
  let out = '';
  for (let i = 0; i < java.length; i++) {
    const c = java[i];
    if (c === '\\' && i + 1 < java.length) {
      const next = java[++i];
      out += next === '$' ? '$$' : next;
    } else {
      out += c;
    }
  }
  return out;
}

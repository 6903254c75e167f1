/**
 * Wire-level comparison of our message specs with Kafka's reference specs, version by version.
 *
 * For each version v of ours, the reference is the first of the given references whose spec serves
 * v (the newest release first, then an older snapshot for the versions it dropped). What is compared
 * at v is what goes on the wire at v: whether the message is flexible, the fields present at v in
 * order, and for each its type, nullability, tagged-ness and tag, flexibility, default and nested
 * fields; for a field both specs declare but v lacks, its default (what a decoder fills in) and
 * whether it is ignorable (what an encoder does with a value it cannot write). Documentation,
 * listeners, deprecatedVersions, mapKey and entityType are not compared; version ranges and defaults
 * are compared by what they mean, not how they are spelt.
 */
import { RawField, RawSpec, parseRange, inRange } from './spec-util';

export interface SpecDifference {
  spec: string;
  /** the version of ours compared; null for what is not per version (name, type, apiKey, the range) */
  version: number | null;
  /** dotted field path plus ':' attribute, e.g. "Topics.Name:nullable"; top level: ":flexible" */
  path: string;
  ours: string;
  reference: string;
  /** the name of the reference compared with */
  referenceName: string;
}

/** A set of reference specs, e.g. one Kafka release's. */
export interface Reference {
  name: string;
  specs: Map<string, RawSpec>;
}

const INT_TYPES = new Set(['int8', 'int16', 'uint16', 'int32', 'int64']);

/** Canonical form of a default value for its type (absent and "" are the type's zero value). */
export function normDefault(type: string, d: string | number | boolean | undefined): string {
  const s = d === undefined ? '' : String(d).trim();
  if (s === 'null') return 'null';
  if (INT_TYPES.has(type)) {
    if (s === '') return '0';
    const m = /^(-?)(0x[0-9a-fA-F]+|\d+)$/.exec(s);
    if (!m) return `invalid:${s}`;
    return String((m[1] ? -1n : 1n) * BigInt(m[2]));
  }
  if (type === 'bool') return s === '' ? 'false' : s;
  if (type === 'float64') return s === '' ? '0' : String(Number(s));
  return JSON.stringify(s);
}

function fieldDefault(f: RawField): string {
  return f.type.startsWith('[]') ? normDefault('array', f.default) : normDefault(f.type, f.default);
}

/** Kafka's generator takes a field's versions from its taggedVersions when they are absent. */
function presentAt(f: RawField, v: number): boolean {
  return inRange(v, parseRange(f.versions ?? f.taggedVersions));
}

const has = (range: string | undefined, v: number): boolean => inRange(v, parseRange(range));

/** The nested fields of a struct-typed field (inline, or a common struct of the spec); null for other types. */
function nestedFields(spec: RawSpec, f: RawField): RawField[] | null {
  if (f.fields) return f.fields;
  const name = f.type.replace(/^\[\]/, '');
  return spec.commonStructs?.find((s) => s.name === name)?.fields ?? null;
}

class VersionComparison {
  readonly diffs: SpecDifference[] = [];

  constructor(
    private readonly ours: RawSpec,
    private readonly ref: RawSpec,
    private readonly referenceName: string,
    private readonly version: number,
  ) {}

  same(path: string, ours: string, reference: string): void {
    if (ours !== reference) {
      this.diffs.push({ spec: this.ours.name, version: this.version, path, ours, reference, referenceName: this.referenceName });
    }
  }

  /** Whether a field's own flexibleVersions (e.g. RequestHeader's ClientId: never) make it flexible at this version. */
  private flexible(f: RawField): string {
    return f.flexibleVersions === undefined ? 'as the message' : String(has(f.flexibleVersions, this.version));
  }

  fields(prefix: string, ours: RawField[], ref: RawField[]): void {
    const v = this.version;
    const names = (fields: RawField[]) => fields.filter((f) => presentAt(f, v)).map((f) => f.name).join(',');
    this.same(`${prefix}:fields`, names(ours), names(ref));
    const refByName = new Map(ref.map((f) => [f.name, f]));
    for (const o of ours) {
      const r = refByName.get(o.name);
      if (!r) continue; // a field the reference lacks is either absent at v or already in :fields
      const p = prefix ? `${prefix}.${o.name}` : o.name;
      if (!presentAt(o, v) || !presentAt(r, v)) {
        if (presentAt(o, v) === presentAt(r, v)) {
          this.same(`${p}:ignorable`, String(!!o.ignorable), String(!!r.ignorable));
          this.same(`${p}:default`, fieldDefault(o), fieldDefault(r));
        }
        continue;
      }
      this.same(`${p}:type`, o.type, r.type);
      this.same(`${p}:nullable`, String(has(o.nullableVersions, v)), String(has(r.nullableVersions, v)));
      const tagged = (f: RawField) => (has(f.taggedVersions, v) ? `tag ${String(f.tag)}` : 'not tagged');
      this.same(`${p}:tagged`, tagged(o), tagged(r));
      this.same(`${p}:flexible`, this.flexible(o), this.flexible(r));
      this.same(`${p}:default`, fieldDefault(o), fieldDefault(r));
      const on = nestedFields(this.ours, o);
      const rn = nestedFields(this.ref, r);
      if (on && rn) this.fields(p, on, rn);
      else if (on || rn) this.same(`${p}:fields`, on ? 'struct' : 'no struct', rn ? 'struct' : 'no struct');
    }
  }
}

/** Differences of our spec at version v from a reference spec that serves v. */
export function compareAtVersion(ours: RawSpec, ref: RawSpec, referenceName: string, v: number): SpecDifference[] {
  const c = new VersionComparison(ours, ref, referenceName, v);
  c.same(':flexible', String(has(ours.flexibleVersions, v)), String(has(ref.flexibleVersions, v)));
  const oursMax = parseRange(ours.validVersions).hi;
  if (v === oursMax) {
    const refUnstable = !!ref.latestVersionUnstable && v === parseRange(ref.validVersions).hi;
    c.same(':latestVersionUnstable', String(!!ours.latestVersionUnstable), String(refUnstable));
  }
  c.fields('', ours.fields, ref.fields);
  return c.diffs;
}

function rangeText(s: string): string {
  const r = parseRange(s);
  return r.lo === r.hi ? `${r.lo}` : `${r.lo}-${r.hi}`;
}

/**
 * All wire-relevant differences of our spec from the references (newest first): each version of
 * ours against the first reference serving it; a version none serves is a difference, and so is a
 * newer version the newest reference holding the spec serves and ours lacks.
 */
export function compareWithReferences(ours: RawSpec, references: Reference[]): SpecDifference[] {
  const holding = references.filter((r) => r.specs.has(ours.name));
  const spec = ours.name;
  if (holding.length === 0) return [{ spec, version: null, path: ':file', ours: 'present', reference: 'missing', referenceName: references.map((r) => r.name).join(', ') }];
  const diffs: SpecDifference[] = [];
  const newest = holding[0];
  const newestSpec = newest.specs.get(spec)!;
  const top = (path: string, o: string, r: string) => {
    if (o !== r) diffs.push({ spec, version: null, path, ours: o, reference: r, referenceName: newest.name });
  };
  top(':type', ours.type, newestSpec.type);
  top(':apiKey', String(ours.apiKey), String(newestSpec.apiKey));
  const oursRange = parseRange(ours.validVersions);
  const newestMax = parseRange(newestSpec.validVersions).hi;
  if (newestMax > oursRange.hi) top(':maxVersion', String(oursRange.hi), String(newestMax));
  for (let v = oursRange.lo; v <= oursRange.hi; v++) {
    const ref = holding.find((r) => inRange(v, parseRange(r.specs.get(spec)!.validVersions)));
    if (!ref) {
      const served = holding.map((r) => `${r.name} ${rangeText(r.specs.get(spec)!.validVersions)}`).join(', ');
      diffs.push({ spec, version: v, path: ':validVersions', ours: `${v}`, reference: `not in either reference (${served})`, referenceName: '' });
      continue;
    }
    diffs.push(...compareAtVersion(ours, ref.specs.get(spec)!, ref.name, v));
  }
  return diffs;
}

/**
 * Differences as text, those of consecutive versions with the same path, values and reference on
 * one line; `where` leaves the values and the reference out: "Spec vN-M path", one line per path
 * and run of versions.
 */
export function formatDifferences(diffs: SpecDifference[], { where = false } = {}): string[] {
  const key = (d: SpecDifference) => (where ? [d.spec, d.path] : [d.spec, d.path, d.ours, d.reference, d.referenceName]).join('\u0000');
  const sorted = diffs
    .map((d, i) => ({ d, i }))
    .sort((a, b) => (key(a.d) < key(b.d) ? -1 : key(a.d) > key(b.d) ? 1 : a.i - b.i))
    .map((x) => x.d);
  const out: string[] = [];
  for (let i = 0; i < sorted.length;) {
    const d = sorted[i];
    let last = d.version;
    while (i + 1 < sorted.length && last !== null && key(sorted[i + 1]) === key(d) && sorted[i + 1].version === last + 1) last = sorted[++i].version;
    i++;
    const versions = d.version === null ? '' : d.version === last ? ` v${d.version}` : ` v${d.version}-${last}`;
    const against = d.referenceName ? `reference (${d.referenceName})` : 'reference';
    out.push(`${d.spec}${versions} ${d.path}${where ? '' : `: ours ${d.ours} / ${against} ${d.reference}`}`);
  }
  return out;
}

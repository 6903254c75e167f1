/**
 * Wire-level comparison of two message specs (ours vs Kafka's reference).
 * Ignores documentation ("about"), listeners, deprecatedVersions, mapKey and
 * entityType; normalizes version ranges and defaults.
 */
import { RawField, RawSpec, RawStruct, parseRange } from './spec-util';

export interface SpecDifference {
  spec: string;
  /** dotted field path plus ':' attribute, e.g. "Topics.Name:nullableVersions"; top level: ":validVersions" */
  path: string;
  ours: string;
  reference: string;
}

function normRange(s: string | undefined): string {
  if (s === undefined) return '(absent)';
  const r = parseRange(s);
  if (r.lo > r.hi) return 'none';
  if (r.hi === 0x7fff) return `${r.lo}+`;
  return r.lo === r.hi ? `${r.lo}` : `${r.lo}-${r.hi}`;
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

function same(diffs: SpecDifference[], spec: string, path: string, ours: string, ref: string): void {
  if (ours !== ref) diffs.push({ spec, path, ours, reference: ref });
}

function compareFields(diffs: SpecDifference[], spec: string, prefix: string, ours: RawField[], ref: RawField[]): void {
  const on = ours.map((f) => f.name);
  const rn = ref.map((f) => f.name);
  if (on.join(',') !== rn.join(',')) {
    same(diffs, spec, `${prefix}:fields`, on.join(','), rn.join(','));
  }
  const refByName = new Map(ref.map((f) => [f.name, f]));
  for (const o of ours) {
    const r = refByName.get(o.name);
    if (!r) continue; // already reported in :fields
    const p = prefix ? `${prefix}.${o.name}` : o.name;
    same(diffs, spec, `${p}:type`, o.type, r.type);
    // Kafka's generator takes a field's versions from its taggedVersions when they are absent
    same(diffs, spec, `${p}:versions`, normRange(o.versions ?? o.taggedVersions), normRange(r.versions ?? r.taggedVersions));
    same(diffs, spec, `${p}:nullableVersions`, normRange(o.nullableVersions), normRange(r.nullableVersions));
    same(diffs, spec, `${p}:taggedVersions`, normRange(o.taggedVersions), normRange(r.taggedVersions));
    same(diffs, spec, `${p}:tag`, String(o.tag), String(r.tag));
    same(diffs, spec, `${p}:flexibleVersions`, normRange(o.flexibleVersions), normRange(r.flexibleVersions));
    same(diffs, spec, `${p}:ignorable`, String(!!o.ignorable), String(!!r.ignorable));
    const elemType = o.type.replace(/^\[\]/, '');
    const isArray = o.type.startsWith('[]');
    same(diffs, spec, `${p}:default`, normDefault(isArray ? 'array' : elemType, o.default), normDefault(isArray ? 'array' : r.type.replace(/^\[\]/, ''), r.default));
    if (o.fields || r.fields) {
      if (!o.fields || !r.fields) same(diffs, spec, `${p}:fields`, o.fields ? 'inline struct' : 'no inline fields', r.fields ? 'inline struct' : 'no inline fields');
      else compareFields(diffs, spec, p, o.fields, r.fields);
    }
  }
}

function compareCommonStructs(diffs: SpecDifference[], spec: string, ours: RawStruct[], ref: RawStruct[]): void {
  const on = ours.map((s) => s.name).sort();
  const rn = ref.map((s) => s.name).sort();
  same(diffs, spec, ':commonStructs', on.join(','), rn.join(','));
  const refByName = new Map(ref.map((s) => [s.name, s]));
  for (const o of ours) {
    const r = refByName.get(o.name);
    if (!r) continue;
    same(diffs, spec, `${o.name}:structVersions`, normRange(o.versions), normRange(r.versions));
    compareFields(diffs, spec, o.name, o.fields, r.fields);
  }
}

/** All wire-relevant differences between our spec and the reference spec. */
export function compareSpecs(ours: RawSpec, ref: RawSpec): SpecDifference[] {
  const diffs: SpecDifference[] = [];
  const spec = ours.name;
  same(diffs, spec, ':name', ours.name, ref.name);
  same(diffs, spec, ':type', ours.type, ref.type);
  same(diffs, spec, ':apiKey', String(ours.apiKey), String(ref.apiKey));
  same(diffs, spec, ':validVersions', normRange(ours.validVersions), normRange(ref.validVersions));
  same(diffs, spec, ':flexibleVersions', normRange(ours.flexibleVersions), normRange(ref.flexibleVersions));
  same(diffs, spec, ':latestVersionUnstable', String(!!ours.latestVersionUnstable), String(!!ref.latestVersionUnstable));
  compareFields(diffs, spec, '', ours.fields, ref.fields);
  compareCommonStructs(diffs, spec, ours.commonStructs ?? [], ref.commonStructs ?? []);
  return diffs;
}

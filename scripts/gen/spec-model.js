/*
 * Loading and checking specs: reads one protocol-specs/*.json file (Apache
 * Kafka's message-spec schema; // comments are tolerated) and builds the
 * message model the emitters work from. Anything the generator could not
 * encode faithfully (unknown keys, bad defaults, tags outside flexible
 * versions, ...) is an error here, not a silent difference on the wire.
 *
 * Naming rule for nested structs (array elements, struct fields and
 * commonStructs): the interface is named <Message><StructType>, except when
 * the struct type name already starts with the message name, in which case
 * it is used as is. Examples: ProduceRequest's []TopicProduceData ->
 * ProduceRequestTopicProduceData; MetadataResponse's []MetadataResponseBroker
 * -> MetadataResponseBroker.
 *
 * Field typing rule:
 *   int8/int16/uint16/int32/float64 -> number, int64 -> bigint, bool -> boolean,
 *   string -> string, uuid -> string (32 lowercase hex chars),
 *   bytes/records -> Buffer, []T -> T[], struct -> its interface;
 *   `| null` is added when the field has nullableVersions.
 *   A field is optional (`?`) when it has an explicit "default", is tagged or
 *   is ignorable; encoders substitute the default for undefined. All other
 *   fields are required (at runtime a required field that the version being
 *   encoded lacks may still be undefined). Decoders always fill every field,
 *   using the default for fields absent from the version being decoded.
 *   Defaults follow Kafka: "" / absent = 0, false, "", [], empty bytes, zero
 *   uuid, all-default struct; "null" = null; integers may be decimal or 0x hex.
 */
'use strict';

const fs = require('fs');
const { NO_VERSIONS, parseVersions, isEmpty, intersect, hull } = require('./versions');

/** Removes // comments outside of JSON strings. */
function stripComments(text) {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') {
        out += text[++i] ?? '';
      } else if (c === '"') {
        inString = false;
      }
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else {
      out += c;
    }
  }
  return out;
}

/** Primitive field types: TypeScript type, fixed wire size, and the Reader/Writer method names. */
const PRIMS = {
  bool: { ts: 'boolean', size: 1, w: 'bool', r: 'bool' },
  int8: { ts: 'number', size: 1, w: 'int8', r: 'int8' },
  int16: { ts: 'number', size: 2, w: 'int16', r: 'int16' },
  uint16: { ts: 'number', size: 2, w: 'uint16', r: 'uint16' },
  int32: { ts: 'number', size: 4, w: 'int32', r: 'int32' },
  int64: { ts: 'bigint', size: 8, w: 'int64', r: 'int64' },
  float64: { ts: 'number', size: 8, w: 'float64', r: 'float64' },
  uuid: { ts: 'string', size: 16, w: 'uuid', r: 'uuid' },
  string: { ts: 'string' },
  bytes: { ts: 'Buffer' },
  records: { ts: 'Buffer' },
};

// The spec keys the generator handles; any other key is an error, as ignoring it could change the wire format.
const SPEC_KEYS = new Set([
  'apiKey', 'type', 'listeners', 'name', 'validVersions', 'flexibleVersions', 'fields',
  'latestVersionUnstable', 'commonStructs', 'deprecatedVersions', 'about',
]);
const FIELD_KEYS = new Set([
  'name', 'type', 'versions', 'entityType', 'fields', 'mapKey', 'default', 'ignorable',
  'nullableVersions', 'tag', 'taggedVersions', 'flexibleVersions', 'about', 'zeroCopy',
]);
const STRUCT_KEYS = new Set(['name', 'versions', 'fields', 'about']);

/** Lower-cases the first letter: field name ProducerId -> property producerId. */
function camel(name) {
  return name[0].toLowerCase() + name.slice(1);
}

function loadSpec(file) {
  const text = fs.readFileSync(file, 'utf8');
  let spec;
  try {
    spec = JSON.parse(stripComments(text));
  } catch (e) {
    throw new Error(`${file}: ${e.message}`, { cause: e });
  }
  return spec;
}

/**
 * Builds the model of one message:
 * { name, kind, apiKey, valid, flexible, root: Struct, structs: Map<typeName, Struct> }
 * Struct: { typeName, iface, fields: Field[], ctx }
 * Field: { name, prop, type, versions, nullable, tagged, tag, ignorable, hasDefault, default, flexOverride, optional }
 * type: { kind: 'prim', prim } | { kind: 'array', elem: type } | { kind: 'struct', struct }
 */
function buildModel(spec, file) {
  for (const k of Object.keys(spec)) {
    if (!SPEC_KEYS.has(k)) throw new Error(`${file}: unsupported top-level key ${k}`);
  }
  const name = spec.name;
  if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) throw new Error(`${file}: bad name ${name}`);
  const valid = parseVersions(spec.validVersions, `${name}.validVersions`);
  if (!valid || isEmpty(valid)) throw new Error(`${file}: validVersions required`);
  const flexible = parseVersions(spec.flexibleVersions, `${name}.flexibleVersions`) || NO_VERSIONS;
  const msg = {
    name,
    kind: spec.type,
    apiKey: spec.apiKey,
    valid,
    flexible,
    unstableLatest: !!spec.latestVersionUnstable,
    structs: new Map(),
    root: null,
  };
  if (!['request', 'response', 'header', 'data'].includes(spec.type)) throw new Error(`${file}: unsupported type ${spec.type}`);

  const ifaceName = (typeName) => (typeName.startsWith(name) ? typeName : name + typeName);

  // common structs first (their fields may reference each other)
  const pendingCommon = [];
  for (const cs of spec.commonStructs || []) {
    for (const k of Object.keys(cs)) if (!STRUCT_KEYS.has(k)) throw new Error(`${file}: commonStruct ${cs.name}: unsupported key ${k}`);
    if (msg.structs.has(cs.name)) throw new Error(`${file}: struct ${cs.name} defined twice`);
    const st = { typeName: cs.name, iface: ifaceName(cs.name), fields: null, ctx: NO_VERSIONS, common: true };
    msg.structs.set(cs.name, st);
    pendingCommon.push([st, cs.fields]);
  }

  function parseType(f, where) {
    let t = f.type;
    let isArray = false;
    if (t.startsWith('[]')) {
      isArray = true;
      t = t.slice(2);
    }
    let base;
    if (PRIMS[t]) {
      if (f.fields) throw new Error(`${where}: primitive type ${f.type} with fields`);
      if (isArray && (t === 'records' || t === 'bytes')) throw new Error(`${where}: arrays of ${t} are not supported`);
      base = { kind: 'prim', prim: t };
    } else {
      if (!/^[A-Z][A-Za-z0-9]*$/.test(t)) throw new Error(`${where}: bad type ${f.type}`);
      let st = msg.structs.get(t);
      if (f.fields) {
        if (st) throw new Error(`${where}: struct ${t} defined twice`);
        st = { typeName: t, iface: ifaceName(t), fields: null, ctx: NO_VERSIONS, common: false };
        msg.structs.set(t, st);
        st.fields = f.fields.map((sf) => parseField(sf, `${where}.${sf.name}`));
      } else if (!st) {
        throw new Error(`${where}: unknown struct type ${t}`);
      }
      base = { kind: 'struct', struct: st };
    }
    return isArray ? { kind: 'array', elem: base } : base;
  }

  function parseField(f, where) {
    for (const k of Object.keys(f)) if (!FIELD_KEYS.has(k)) throw new Error(`${where}: unsupported field key ${k}`);
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(f.name)) throw new Error(`${where}: bad field name`);
    const versions = parseVersions(f.versions, `${where}.versions`);
    if (!versions) throw new Error(`${where}: versions required`);
    const field = {
      name: f.name,
      prop: camel(f.name),
      versions,
      nullableVersions: parseVersions(f.nullableVersions, `${where}.nullableVersions`) || NO_VERSIONS,
      tagged: f.tag !== undefined,
      tag: f.tag,
      taggedVersions: parseVersions(f.taggedVersions, `${where}.taggedVersions`),
      ignorable: !!f.ignorable,
      hasDefault: f.default !== undefined,
      rawDefault: f.default === undefined ? '' : String(f.default),
      flexOverride: parseVersions(f.flexibleVersions, `${where}.flexibleVersions`),
      type: null,
      where,
    };
    field.type = parseType(f, where);
    if (field.tagged) {
      if (!Number.isInteger(field.tag) || field.tag < 0) throw new Error(`${where}: bad tag`);
      if (!field.taggedVersions) throw new Error(`${where}: tag without taggedVersions`);
      if (field.taggedVersions.lo !== versions.lo || field.taggedVersions.hi !== versions.hi) {
        throw new Error(`${where}: taggedVersions different from versions is not supported`);
      }
      if (!isEmpty(field.taggedVersions) && (field.taggedVersions.lo < flexible.lo || isEmpty(flexible))) {
        throw new Error(`${where}: tagged in non-flexible versions`);
      }
    } else if (field.taggedVersions) {
      throw new Error(`${where}: taggedVersions without tag`);
    }
    if (field.flexOverride && !(field.type.kind === 'prim' && ['string', 'bytes', 'records'].includes(field.type.prim)) && field.type.kind !== 'array') {
      throw new Error(`${where}: flexibleVersions override only supported on string/bytes/records/array fields`);
    }
    field.nullable = !isEmpty(field.nullableVersions);
    if (field.nullable) {
      const k = field.type.kind === 'prim' ? field.type.prim : field.type.kind;
      if (!['string', 'bytes', 'records', 'array', 'struct'].includes(k)) throw new Error(`${where}: type ${f.type} cannot be nullable`);
    }
    field.optional = field.hasDefault || field.tagged || field.ignorable;
    field.default = parseDefault(field, where);
    return field;
  }

  for (const [st, fields] of pendingCommon) {
    st.fields = fields.map((sf) => parseField(sf, `${name}.${st.typeName}.${sf.name}`));
  }
  msg.root = { typeName: name, iface: name, fields: spec.fields.map((f) => parseField(f, `${name}.${f.name}`)), ctx: valid, root: true };

  // compute version contexts (hull of versions in which each struct can appear)
  function visit(st, ctx) {
    const next = hull(st.ctx, ctx);
    if (!st.root && next.lo === st.ctx.lo && next.hi === st.ctx.hi && !isEmpty(st.ctx)) return;
    st.ctx = next;
    for (const f of st.fields) {
      const sub = intersect(ctx, f.versions);
      const t = f.type.kind === 'array' ? f.type.elem : f.type;
      if (t.kind === 'struct' && !isEmpty(sub)) visit(t.struct, sub);
    }
  }
  visit(msg.root, valid);

  // tag uniqueness per struct
  for (const st of [msg.root, ...msg.structs.values()]) {
    const tags = new Set();
    const props = new Set();
    for (const f of st.fields) {
      if (props.has(f.prop)) throw new Error(`${st.iface}: duplicate field ${f.name}`);
      props.add(f.prop);
      if (!f.tagged) continue;
      if (tags.has(f.tag)) throw new Error(`${st.iface}: duplicate tag ${f.tag}`);
      tags.add(f.tag);
    }
  }
  return msg;
}

/** Default value as a model: { kind: 'null' } | { kind: 'lit', ts } | { kind: 'emptyArray' } | { kind: 'struct' } */
function parseDefault(f, where) {
  const d = f.rawDefault;
  const t = f.type;
  if (d === 'null') {
    if (!f.nullable) throw new Error(`${where}: default null on non-nullable field`);
    return { kind: 'null', ts: 'null' };
  }
  if (t.kind === 'array') {
    if (d !== '') throw new Error(`${where}: arrays only support "" or "null" defaults`);
    return { kind: 'emptyArray', ts: '[]' };
  }
  if (t.kind === 'struct') {
    if (d !== '') throw new Error(`${where}: structs only support "" or "null" defaults`);
    return { kind: 'struct', ts: `default${t.struct.iface}()` };
  }
  switch (t.prim) {
    case 'bool':
      if (d === '' || d === 'false') return { kind: 'lit', ts: 'false' };
      if (d === 'true') return { kind: 'lit', ts: 'true' };
      throw new Error(`${where}: bad bool default ${d}`);
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'int64': {
      let v = 0n;
      if (d !== '') {
        const m = /^(-?)(0x[0-9a-fA-F]+|\d+)$/.exec(d);
        if (!m) throw new Error(`${where}: bad integer default ${d}`);
        v = BigInt(m[2]);
        if (m[1]) v = -v;
      }
      const ranges = { int8: [-128n, 127n], int16: [-32768n, 32767n], uint16: [0n, 65535n], int32: [-(2n ** 31n), 2n ** 31n - 1n], int64: [-(2n ** 63n), 2n ** 63n - 1n] };
      const [lo, hi] = ranges[t.prim];
      if (v < lo || v > hi) throw new Error(`${where}: default ${d} out of range for ${t.prim}`);
      return { kind: 'lit', ts: t.prim === 'int64' ? `${v}n` : `${v}` };
    }
    case 'float64': {
      if (d === '') return { kind: 'lit', ts: '0' };
      const v = Number(d);
      if (!Number.isFinite(v)) throw new Error(`${where}: bad float64 default ${d}`);
      return { kind: 'lit', ts: String(v) };
    }
    case 'string':
      return { kind: 'lit', ts: JSON.stringify(d) };
    case 'uuid': {
      if (d === '') return { kind: 'lit', ts: 'ZERO_UUID' };
      const hex = /^[0-9a-f]{32}$/i.test(d) ? d.toLowerCase() : Buffer.from(d, 'base64').toString('hex');
      if (hex.length !== 32) throw new Error(`${where}: bad uuid default ${d}`);
      return { kind: 'lit', ts: JSON.stringify(hex) };
    }
    case 'bytes':
    case 'records':
      if (d !== '') throw new Error(`${where}: ${t.prim} only support "" or "null" defaults`);
      return { kind: 'lit', ts: 'EMPTY_BUFFER' };
  }
  throw new Error(`${where}: unhandled default`);
}

module.exports = { PRIMS, camel, stripComments, loadSpec, buildModel };

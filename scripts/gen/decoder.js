/*
 * Decoder bodies: the statements of decode<Struct>(r, version) for one struct
 * of a message, the mirror of encoder.js. Every field is filled (with its
 * default when the version lacks it) and unknown tags are skipped.
 */
'use strict';

const { PRIMS } = require('./spec-model');
const { intersect, cond } = require('./versions');
const { localName, tsType, fieldTsType, indent, branch, flexRange } = require('./emit-helpers');

/** Ternary on a condition that may be statically true/false. */
function ternary(c, a, b) {
  if (c === true) return a;
  if (c === false) return b;
  return `${c} ? ${a} : ${b}`;
}

/** Expression reading a non-array value of type t for field f. */
function readExpr(msg, f, t, ctx) {
  const isElem = t !== f.type; // element of an array field: never nullable itself
  if (t.kind === 'struct') {
    const dec = `decode${t.struct.iface}(r, version)`;
    const nullC = f.nullable && !isElem ? cond(f.nullableVersions, ctx) : false;
    return ternary(nullC, `(r.int8() < 0 ? null : ${dec})`, dec);
  }
  const p = t.prim;
  if (PRIMS[p].r) return `r.${PRIMS[p].r}()`;
  const base = p === 'string' ? 'String' : 'Bytes';
  const lower = p === 'string' ? 'string' : 'bytes';
  const flexC = cond(flexRange(f, msg), ctx);
  const nullC = f.nullable && !isElem ? cond(f.nullableVersions, ctx) : false;
  const compact = ternary(nullC, `r.compactNullable${base}()`, `r.compact${base}()`);
  const classic = ternary(nullC, `r.nullable${base}()`, `r.${lower}()`);
  const wrap = (e) => (typeof nullC === 'string' ? `(${e})` : e);
  return ternary(flexC, wrap(compact), wrap(classic));
}

/** Statements assigning the decoded value of field f to local `v` (already declared). */
function emitRead(msg, st, f, ctx, v) {
  const t = f.type;
  if (t.kind !== 'array') return [`${v} = ${readExpr(msg, f, t, ctx)};`];
  const path = `${st.iface}.${f.prop}`;
  const flexC = cond(flexRange(f, msg), ctx);
  const nullC = f.nullable ? cond(f.nullableVersions, ctx) : false;
  const elemRead = readExpr(msg, f, t.elem, ctx);
  const onNull =
    nullC === true
      ? [`${v} = null;`]
      : nullC === false
        ? [`throw nullNotAllowed('${path}', version);`]
        : [`if (!(${nullC})) throw nullNotAllowed('${path}', version);`, `${v} = null;`];
  const fill = [`const a: ${tsType(t.elem)}[] = [];`, `for (let i = 0; i < n; i++) a.push(${elemRead});`, `${v} = a;`];
  const lenLine = `const n = ${ternary(flexC, 'r.compactArrayLength()', 'r.arrayLength()')};`;
  if (nullC === false) {
    return ['{', `  ${lenLine}`, `  if (n < 0) throw nullNotAllowed('${path}', version);`, ...indent(fill, 1), '}'];
  }
  return ['{', `  ${lenLine}`, '  if (n < 0) {', ...indent(onNull, 2), '  } else {', ...indent(fill, 2), '  }', '}'];
}

function emitDecodeField(msg, st, f) {
  const v = localName(f);
  const present = cond(f.versions, st.ctx);
  const sub = intersect(f.versions, st.ctx);
  const type = fieldTsType(f);
  if (present === false) return [`const ${v}: ${type} = ${f.default.ts};`];
  if (f.type.kind !== 'array') {
    const e = readExpr(msg, f, f.type, sub);
    if (present === true) return [`const ${v}: ${type} = ${e};`];
    return [`const ${v}: ${type} = ${present} ? ${e.includes('?') && !e.startsWith('(') ? `(${e})` : e} : ${f.default.ts};`];
  }
  if (present === true) return [`let ${v}: ${type};`, ...emitRead(msg, st, f, sub, v)];
  return [`let ${v}: ${type} = ${f.default.ts};`, ...branch(present, emitRead(msg, st, f, sub, v))];
}

function emitDecodeTagged(msg, st) {
  const tagged = st.fields.filter((f) => f.tagged).sort((a, b) => a.tag - b.tag);
  const flexC = cond(msg.flexible, st.ctx);
  const out = [];
  for (const f of tagged) out.push(`let ${localName(f)}: ${fieldTsType(f)} = ${f.default.ts};`);
  if (flexC === false) return out;
  const flexCtx = intersect(st.ctx, msg.flexible);
  const live = tagged
    .map((f) => ({ f, present: cond(intersect(f.versions, f.taggedVersions), flexCtx) }))
    .filter((x) => x.present !== false);
  if (live.length === 0) {
    out.push(...branch(flexC, ['r.skipTaggedFields();']));
    return out;
  }
  const loop = [
    'const numTaggedFields = r.unsignedVarint();',
    'for (let j = 0; j < numTaggedFields; j++) {',
    '  const tag = r.unsignedVarint();',
    '  const size = r.unsignedVarint();',
    '  switch (tag) {',
  ];
  for (const { f, present } of live) {
    const sub = intersect(intersect(f.versions, f.taggedVersions), st.ctx);
    const read = [`const end = r.beginTaggedField(size);`, ...emitRead(msg, st, f, sub, localName(f)), `r.endTaggedField(end, ${f.tag});`];
    loop.push(`    case ${f.tag}: {`, ...indent(branch(present, read, ['r.skip(size);']), 3), '      break;', '    }');
  }
  loop.push('    default:', '      r.skip(size);', '  }', '}');
  out.push(...branch(flexC, loop));
  return out;
}

function genDecodeBody(msg, st) {
  const lines = [];
  for (const f of st.fields) {
    if (f.tagged) continue;
    lines.push(...emitDecodeField(msg, st, f));
  }
  lines.push(...emitDecodeTagged(msg, st));
  const props = st.fields.map((f) => (localName(f) === f.prop ? f.prop : `${f.prop}: ${localName(f)}`));
  if (props.length === 0) lines.push(`return {};`);
  else lines.push('return {', ...props.map((p) => `  ${p},`), '};');
  return lines;
}

module.exports = { genDecodeBody };

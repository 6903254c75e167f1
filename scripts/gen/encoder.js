/*
 * Encoder bodies: the statements of encode<Struct>(w, m, version) for one
 * struct of a message.
 *
 * Wire semantics follow Kafka's MessageDataGenerator: classic vs compact
 * (flexible) encodings of strings/bytes/arrays, tagged-field sections at the
 * end of every struct in flexible versions (written only when != default, in
 * tag order), nullable structs prefixed by an int8 marker (-1 = null,
 * 1 = present), and encoding a non-default value of a non-ignorable field
 * that the version lacks throws UnsupportedVersionError (ignorable fields are
 * silently dropped).
 */
'use strict';

const { PRIMS } = require('./spec-model');
const { intersect, cond } = require('./versions');
const { localName, nonDefaultExpr, indent, branch, flexRange } = require('./emit-helpers');

/**
 * Expression for the value of field f of object `obj` to encode (defaults
 * applied). Required fields that are absent from some versions also get
 * their default at runtime when undefined (typed callers must still set
 * them; untyped callers of version-specific bodies need not).
 */
function valueExpr(f, obj, ctx) {
  const acc = `${obj}.${f.prop}`;
  const everywhere = ctx !== undefined && cond(f.versions, ctx) === true;
  if (!f.optional && everywhere) return acc;
  if (f.nullable) return `(${acc} === undefined ? ${f.default.ts} : ${acc})`;
  return `(${acc} ?? ${f.default.ts})`;
}

/** Parenthesizes an `a || b` expression so that it can be an operand of &&. */
function wrapOr(e) {
  return e.includes('||') && !e.startsWith('(') ? `(${e})` : e;
}

/** `c && e`, where condition c may be statically true. */
function andCond(c, e) {
  if (c === true) return e;
  return `(${c}) && ${e}`;
}

/** Single-statement if/else, compact form. */
function branch1(c, thenStmt, elseStmt) {
  if (c === true) return [thenStmt];
  if (c === false) return [elseStmt];
  return [`if (${c}) ${thenStmt}`, `else ${elseStmt}`];
}

/**
 * Lines writing value expression `v` (a simple identifier or property
 * access) of field f with writer `wv`, knowing the version is in ctx.
 */
function emitWrite(msg, st, f, ctx, wv, v) {
  const t = f.type;
  const path = `${st.iface}.${f.prop}`;
  const flexC = cond(flexRange(f, msg), ctx);
  const nullC = f.nullable ? cond(f.nullableVersions, ctx) : false;
  const nullCheck = (onNull) => {
    // statements for v === null
    if (nullC === true) return onNull;
    if (nullC === false) return [`throw nullNotAllowed('${path}', version);`];
    return [`if (!(${nullC})) throw nullNotAllowed('${path}', version);`, ...onNull];
  };
  if (t.kind === 'prim') {
    const p = t.prim;
    if (PRIMS[p].w) return [`${wv}.${PRIMS[p].w}(${v});`];
    const base = p === 'string' ? 'String' : 'Bytes';
    const lower = p === 'string' ? 'string' : 'bytes';
    if (!f.nullable) return branch1(flexC, `${wv}.compact${base}(${v});`, `${wv}.${lower}(${v});`);
    const out = [];
    if (nullC === false) out.push(`if (${v} === null) throw nullNotAllowed('${path}', version);`);
    else if (nullC !== true) out.push(`if (${v} === null && !(${nullC})) throw nullNotAllowed('${path}', version);`);
    out.push(...branch1(flexC, `${wv}.compactNullable${base}(${v});`, `${wv}.nullable${base}(${v});`));
    return out;
  }
  if (t.kind === 'struct') {
    const enc = `encode${t.struct.iface}(${wv}, ${v}, version);`;
    if (!f.nullable || nullC === false) {
      if (!f.nullable) return [enc];
      return [`if (${v} === null) throw nullNotAllowed('${path}', version);`, enc];
    }
    const withMarker = [
      `if (${v} === null) {`,
      `  ${wv}.int8(-1);`,
      '} else {',
      `  ${wv}.int8(1);`,
      `  ${enc}`,
      '}',
    ];
    if (nullC === true) return withMarker;
    return branch(nullC, withMarker, [`if (${v} === null) throw nullNotAllowed('${path}', version);`, enc]);
  }
  // array
  const elem = t.elem;
  const loop =
    elem.kind === 'struct'
      ? `for (let i = 0; i < ${v}.length; i++) encode${elem.struct.iface}(${wv}, ${v}[i], version);`
      : elem.prim === 'string'
        ? `for (let i = 0; i < ${v}.length; i++) ${flexC === true ? `${wv}.compactString(${v}[i]);` : flexC === false ? `${wv}.string(${v}[i]);` : `{ if (${flexC}) ${wv}.compactString(${v}[i]); else ${wv}.string(${v}[i]); }`}`
        : `for (let i = 0; i < ${v}.length; i++) ${wv}.${PRIMS[elem.prim].w}(${v}[i]);`;
  const len = branch1(flexC, `${wv}.compactArrayLength(${v}.length);`, `${wv}.arrayLength(${v}.length);`);
  if (!f.nullable) return [...len, loop];
  return [
    `if (${v} === null) {`,
    ...indent(nullCheck(branch1(flexC, `${wv}.compactArrayLength(-1);`, `${wv}.arrayLength(-1);`)), 1),
    '} else {',
    ...indent([...len, loop], 1),
    '}',
  ];
}

function needsLocal(f, ctx) {
  // arrays and nullable values are referenced several times: bind them to a local
  return f.optional || f.type.kind === 'array' || f.nullable || cond(f.versions, ctx) !== true;
}

function emitEncodeField(msg, st, f) {
  const ctx = st.ctx;
  const present = cond(f.versions, ctx);
  const sub = intersect(f.versions, ctx);
  const path = `${st.iface}.${f.prop}`;
  const out = [];
  const bind = needsLocal(f, ctx);
  const v = bind ? localName(f) : `m.${f.prop}`;
  const absent = f.ignorable ? [] : [`if (${nonDefaultExpr(f, v)}) throw unsupportedField('${path}', version);`];
  if (present === false && f.ignorable) return [];
  const body = present === false ? absent : null;
  const writeLines = present === false ? [] : emitWrite(msg, st, f, sub, 'w', v);
  const bindLine = `const ${v} = ${valueExpr(f, 'm', ctx)};`;
  if (bind && absent.length === 0 && present !== true) {
    // only used when present: bind inside the branch
    return branch(present, [bindLine, ...writeLines]);
  }
  const lines = body || branch(present, writeLines, absent);
  if (bind) out.push(bindLine);
  out.push(...lines);
  return out;
}

function fixedSize(f) {
  return f.type.kind === 'prim' && PRIMS[f.type.prim].size !== undefined ? PRIMS[f.type.prim].size : null;
}

function emitEncodeTagged(msg, st) {
  const tagged = st.fields.filter((f) => f.tagged).sort((a, b) => a.tag - b.tag);
  const flexC = cond(msg.flexible, st.ctx);
  const out = [];
  if (flexC === false && tagged.length === 0) return out;
  const live = [];
  const flexCtx = intersect(st.ctx, msg.flexible);
  for (const f of tagged) {
    // tagged fields are optional: undefined means default (no default object is materialized)
    const v = localName(f);
    out.push(`const ${v} = m.${f.prop};`);
    const nonDefault = `${v} !== undefined && ${wrapOr(nonDefaultExpr(f, v))}`;
    const range = intersect(f.versions, f.taggedVersions);
    const present = cond(range, st.ctx);
    if (present !== true && !f.ignorable) {
      const test = present === false ? nonDefault : `!(${present}) && ${nonDefault}`;
      out.push(`if (${test}) throw unsupportedField('${st.iface}.${f.prop}', version);`);
    }
    if (present !== false) live.push({ f, v, present: cond(range, flexCtx), nonDefault });
  }
  const sec = [];
  if (live.length === 0) {
    sec.push('w.unsignedVarint(0);');
  } else {
    sec.push('let numTaggedFields = 0;');
    for (const { present, nonDefault } of live) sec.push(`if (${andCond(present, nonDefault)}) numTaggedFields++;`);
    sec.push('w.unsignedVarint(numTaggedFields);');
    for (const { f, v, present, nonDefault } of live) {
      const sub = intersect(intersect(f.versions, f.taggedVersions), st.ctx);
      const size = fixedSize(f);
      const body = [`w.unsignedVarint(${f.tag});`];
      if (size !== null) {
        body.push(`w.unsignedVarint(${size});`, ...emitWrite(msg, st, f, sub, 'w', v));
      } else {
        body.push('const t = new Writer(64);', ...emitWrite(msg, st, f, sub, 't', v), 'w.unsignedVarint(t.length);', 'w.append(t);');
      }
      sec.push(`if (${andCond(present, nonDefault)}) {`, ...indent(body, 1), '}');
    }
  }
  out.push(...branch(flexC, sec));
  return out;
}

function genEncodeBody(msg, st) {
  const lines = [];
  for (const f of st.fields) {
    if (f.tagged) continue;
    lines.push(...emitEncodeField(msg, st, f));
  }
  lines.push(...emitEncodeTagged(msg, st));
  return lines;
}

module.exports = { genEncodeBody };

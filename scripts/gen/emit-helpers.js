/*
 * Building blocks shared by the encoder and decoder emitters: names and
 * TypeScript types of fields, default tests, and statement shapes that fold
 * away conditions known statically (true/false) and keep the rest as code.
 */
'use strict';

const { PRIMS } = require('./spec-model');

/**
 * Field values are bound to locals named after the field; these names would
 * clash with the generated code's own locals and imports, or are reserved words.
 */
const RESERVED = new Set([
  // parameters and generated locals
  'r', 'w', 'm', 't', 'i', 'j', 'n', 'a', 'v', 'tag', 'size', 'end', 'version', 'numTaggedFields',
  'unsupportedField', 'nullNotAllowed', 'checkVersion', 'ZERO_UUID', 'EMPTY_BUFFER', 'Reader', 'Writer', 'Buffer',
  // JS / TS reserved words that could plausibly be field names
  'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else',
  'enum', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import', 'in', 'instanceof',
  'new', 'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try', 'typeof', 'var', 'void',
  'while', 'with', 'yield', 'let', 'static', 'implements', 'interface', 'package', 'private', 'protected',
  'public', 'await', 'arguments', 'eval', 'undefined',
]);
function localName(f) {
  return RESERVED.has(f.prop) ? `${f.prop}_` : f.prop;
}

function tsType(t) {
  if (t.kind === 'prim') return PRIMS[t.prim].ts;
  if (t.kind === 'struct') return t.struct.iface;
  return `${tsType(t.elem)}[]`;
}
function fieldTsType(f) {
  return tsType(f.type) + (f.nullable ? ' | null' : '');
}

/** Expression true when `v` differs from the field's default. */
function nonDefaultExpr(f, v) {
  const d = f.default;
  if (d.kind === 'null') return `${v} !== null`;
  const t = f.type;
  const nullOr = (e) => (f.nullable ? `(${v} === null || ${e})` : e);
  if (t.kind === 'array') return nullOr(`${v}.length !== 0`);
  if (t.kind === 'struct') return nullOr(`!isDefault${t.struct.iface}(${v})`);
  if (t.prim === 'bytes' || t.prim === 'records') return nullOr(`${v}.length !== 0`);
  return `${v} !== ${d.ts}`;
}

function indent(lines, n) {
  const pad = '  '.repeat(n);
  return lines.map((l) => (l === '' ? l : pad + l));
}

/** if/else on a condition that may be statically true/false. */
function branch(c, thenLines, elseLines) {
  if (c === true) return thenLines;
  if (c === false) return elseLines || [];
  const out = [`if (${c}) {`, ...indent(thenLines, 1)];
  if (elseLines && elseLines.length) out.push('} else {', ...indent(elseLines, 1));
  out.push('}');
  return out;
}

/** Versions in which field f uses the compact (flexible) encodings. */
function flexRange(f, msg) {
  return f.flexOverride || msg.flexible;
}

module.exports = { localName, tsType, fieldTsType, nonDefaultExpr, indent, branch, flexRange };

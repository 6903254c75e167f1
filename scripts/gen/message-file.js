/*
 * One generated file per spec, <Message>.ts: the interfaces of the message
 * and its structs, the default/isDefault helpers the codecs need, the
 * module-private per-struct codecs, and the exported encode<Message>,
 * decode<Message> and <Message>Versions. Each file imports only what it
 * uses, and parameters a function does not read are prefixed with _, so
 * that noUnusedLocals/noUnusedParameters hold for generated code too.
 */
'use strict';

const { isEmpty, fmtVersions } = require('./versions');
const { fieldTsType, nonDefaultExpr, indent } = require('./emit-helpers');
const { genEncodeBody } = require('./encoder');
const { genDecodeBody } = require('./decoder');

/** The doc comment of a field: its spec attributes. */
function describeField(f) {
  const bits = [`${f.type.kind === 'array' ? '[]' : ''}${f.type.kind === 'array' ? describeType(f.type.elem) : describeType(f.type)}`, `versions ${fmtVersions(f.versions)}`];
  if (f.nullable) bits.push(`nullable ${fmtVersions(f.nullableVersions)}`);
  if (f.tagged) bits.push(`tag ${f.tag}`);
  if (f.flexOverride) bits.push(`flexible ${fmtVersions(f.flexOverride)}`);
  if (f.ignorable) bits.push('ignorable');
  if (f.hasDefault) bits.push(`default ${JSON.stringify(f.rawDefault)}`);
  return bits.join(', ');
}
function describeType(t) {
  return t.kind === 'struct' ? t.struct.typeName : t.prim;
}

/** Struct types that need default/isDefault helpers (used as plain struct fields). */
function structsNeedingDefaults(msg) {
  const need = new Set();
  const add = (st) => {
    if (need.has(st)) return;
    need.add(st);
    for (const f of st.fields) if (f.type.kind === 'struct') add(f.type.struct);
  };
  for (const st of [msg.root, ...msg.structs.values()]) {
    for (const f of st.fields) if (f.type.kind === 'struct') add(f.type.struct);
  }
  return need;
}

/** `name` is read in `code` as a variable (not as a property, `.name`, or inside a path string). */
function uses(code, name) {
  return new RegExp(`(?<![.\\w'])${name}\\b`).test(code);
}

/**
 * A function definition whose parameters (`[name, type]` pairs) that the body does not read are
 * prefixed with `_`, so that the output compiles under noUnusedParameters.
 */
function fnDef(head, params, ret, body) {
  const text = body.join('\n');
  const list = params.map(([n, t]) => `${uses(text, n) ? n : `_${n}`}: ${t}`).join(', ');
  return [`${head}(${list}): ${ret} {`, ...indent(body, 1), '}', ''];
}

/** The text of <Message>.ts for the model of one spec (the writer adds the banner). */
function genMessageFile(msg) {
  const all = [msg.root, ...msg.structs.values()];
  const ver = `versions ${fmtVersions(msg.valid)}, flexible ${fmtVersions(msg.flexible)}`;

  // interfaces: root first, then structs in definition order
  const interfaces = [];
  for (const st of all) {
    const doc = st.root
      ? `${msg.name}${msg.apiKey !== undefined ? ` (api key ${msg.apiKey})` : ''}: ${ver}.`
      : `${st.typeName} struct of ${msg.name} (present in versions ${fmtVersions(st.ctx)}).`;
    interfaces.push(`/** ${doc} */`, `export interface ${st.iface} {`);
    for (const f of st.fields) {
      interfaces.push(`  /** ${describeField(f)} */`, `  ${f.prop}${f.optional ? '?' : ''}: ${fieldTsType(f)};`);
    }
    interfaces.push('}', '');
  }

  const codecs = [];
  for (const st of msg.structs.values()) {
    codecs.push(...fnDef(`function encode${st.iface}`, [['w', 'Writer'], ['m', st.iface], ['version', 'number']], 'void', genEncodeBody(msg, st)));
    codecs.push(...fnDef(`function decode${st.iface}`, [['r', 'Reader'], ['version', 'number']], st.iface, genDecodeBody(msg, st)));
  }
  const lo = msg.valid.lo;
  const hi = msg.valid.hi;
  codecs.push(`export const ${msg.name}Versions = { min: ${lo}, max: ${hi}, flexibleMin: ${isEmpty(msg.flexible) ? 'Infinity' : msg.flexible.lo} } as const;`, '');
  const check = `checkVersion('${msg.name}', version, ${lo}, ${hi});`;
  codecs.push(...fnDef(`export function encode${msg.name}`, [['w', 'Writer'], ['m', msg.name], ['version', 'number']], 'void', [check, ...genEncodeBody(msg, msg.root)]));
  codecs.push(...fnDef(`export function decode${msg.name}`, [['r', 'Reader'], ['version', 'number']], msg.name, [check, ...genDecodeBody(msg, msg.root)]));

  // default / isDefault helpers, only those the codecs (or other helpers in use) call
  const helpers = new Map();
  for (const st of structsNeedingDefaults(msg)) {
    const fields = st.fields.length === 0 ? ['return {};'] : ['return {', ...st.fields.map((f) => `  ${f.prop}: ${f.default.ts},`), '};'];
    helpers.set(`default${st.iface}`, fnDef(`function default${st.iface}`, [], st.iface, fields));
    const tests = st.fields.map((f) => {
      const acc = `m.${f.prop}`;
      const test = nonDefaultExpr(f, acc);
      return `if (${f.optional ? `${acc} !== undefined && ` : ''}${f.optional && /[|&]/.test(test) ? `(${test})` : test}) return false;`;
    });
    helpers.set(`isDefault${st.iface}`, fnDef(`function isDefault${st.iface}`, [['m', st.iface]], 'boolean', [...tests, 'return true;']));
  }
  const used = new Set();
  let reachable = codecs.join('\n');
  for (let grew = true; grew;) {
    grew = false;
    for (const [name, lines] of helpers) {
      if (used.has(name) || !uses(reachable, name)) continue;
      used.add(name);
      reachable += `\n${lines.join('\n')}`;
      grew = true;
    }
  }
  const helperLines = [...helpers].filter(([name]) => used.has(name)).flatMap(([, lines]) => lines);

  const code = [...helperLines, ...codecs].join('\n');
  const imports = ['Reader', 'Writer', 'unsupportedField', 'nullNotAllowed', 'checkVersion', 'EMPTY_BUFFER', 'ZERO_UUID'].filter((n) => uses(code, n));
  return [`import { ${imports.join(', ')} } from '../primitives';`, '', ...interfaces, ...helperLines, ...codecs].join('\n');
}

module.exports = { genMessageFile };

/*
 * Version ranges of the spec format ("3+", "1-4", "5", "none") as { lo, hi },
 * and the conditions the emitters test on them. An empty range has lo > hi.
 *
 * Version conditions are pruned against the versions in which a struct can
 * occur (e.g. no `version >= 3` test inside a struct that only exists in 5+):
 * see cond().
 */
'use strict';

const NO_VERSIONS = Object.freeze({ lo: 1, hi: 0 });
const MAX_VERSION = 0x7fff;

/** "3+", "1-4", "5", "none" -> { lo, hi } (empty when lo > hi). */
function parseVersions(s, what) {
  if (s === undefined || s === null) return null;
  s = String(s).trim();
  if (s === 'none' || s === '') return NO_VERSIONS;
  let m;
  if ((m = /^(\d+)\+$/.exec(s))) return { lo: +m[1], hi: MAX_VERSION };
  if ((m = /^(\d+)-(\d+)$/.exec(s))) return { lo: +m[1], hi: +m[2] };
  if ((m = /^(\d+)$/.exec(s))) return { lo: +m[1], hi: +m[1] };
  throw new Error(`${what}: invalid version range ${JSON.stringify(s)}`);
}

function isEmpty(v) {
  return v.lo > v.hi;
}
function intersect(a, b) {
  const r = { lo: Math.max(a.lo, b.lo), hi: Math.min(a.hi, b.hi) };
  return isEmpty(r) ? NO_VERSIONS : r;
}
function hull(a, b) {
  if (isEmpty(a)) return b;
  if (isEmpty(b)) return a;
  return { lo: Math.min(a.lo, b.lo), hi: Math.max(a.hi, b.hi) };
}
function fmtVersions(v) {
  if (isEmpty(v)) return 'none';
  if (v.hi === MAX_VERSION) return `${v.lo}+`;
  if (v.lo === v.hi) return `${v.lo}`;
  return `${v.lo}-${v.hi}`;
}

/**
 * Condition "version in range" given that version is known to be in ctx.
 * Returns true, false, or a JS expression string.
 */
function cond(range, ctx) {
  const r = intersect(range, ctx);
  if (isEmpty(r)) return false;
  const lo = r.lo > ctx.lo ? `version >= ${r.lo}` : null;
  const hi = r.hi < ctx.hi ? `version <= ${r.hi}` : null;
  if (lo && hi) return `${lo} && ${hi}`;
  return lo || hi || true;
}

module.exports = { NO_VERSIONS, parseVersions, isEmpty, intersect, hull, fmtVersions, cond };

// Kafka answers every entry of a name given twice in one admin request with INVALID_REQUEST.

/** The names that occur more than once in `names`. */
export function repeatedNames(names: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const n of names) (seen.has(n) ? repeated : seen).add(n);
  return repeated;
}

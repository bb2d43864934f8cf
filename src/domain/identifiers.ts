/**
 * Identifiers in names and statements, the one rule for "the same thing or two": entity resolution's
 * merge (mayMerge), relate's DUPLICATE (ingest/relate.ts) and the steward's NEAR_DUPLICATE finding.
 *
 * When an embedding neighbour may stand for the entity a writer names. Embeddings of names read
 * "payments-v1" and "payments-v2", or "zephyr-53b947" and "zephyr-76b778", as near-identical: the
 * shared word dominates and the part that tells them apart is a few characters of digits. Those parts
 * are identifiers, and two names whose identifiers differ are two things, however close the vectors.
 * Such a neighbour is never merged into; it may still be offered as a tentative SAME_AS for review.
 */

/** The identifier tokens of a name: alphanumeric runs that contain a digit, lower-cased. */
export function identifierTokens(name: string): string[] {
  return (name.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((t) => /\p{N}/u.test(t)).sort();
}

/** True when both names carry the same identifiers (none on both sides agrees; one side only does not). */
export function identifiersAgree(a: string, b: string): boolean {
  const x = identifierTokens(a);
  const y = identifierTokens(b);
  if (x.length === 0 && y.length === 0) return true;
  return x.length === y.length && x.every((t, i) => t === y[i]);
}

/** Whether `candidate` (its name or any alias) may absorb a reference named `name`. */
export function mayMerge(name: string, candidate: { name: string; aliases: readonly string[] }): boolean {
  return [candidate.name, ...candidate.aliases].some((n) => identifiersAgree(name, n));
}

/** True when two texts name the same set of identifiers ("writer 1ad620" and "writer 98b1f6" do not). */
export function sameIdentifierSet(a: string, b: string): boolean {
  const x = new Set(identifierTokens(a));
  const y = new Set(identifierTokens(b));
  return x.size === y.size && [...x].every((t) => y.has(t));
}

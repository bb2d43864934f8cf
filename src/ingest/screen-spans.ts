import type { SecretKind } from './screen-kinds.ts';

export interface Span {
  start: number;
  end: number;
}
export interface SecretCandidate extends Span {
  kind: SecretKind;
}

export function spanOf(m: RegExpMatchArray, group: number): Span | undefined {
  const idx = m.indices?.[group];
  return idx ? { start: idx[0], end: idx[1] } : undefined;
}

export const overlaps = (a: Span, b: Span): boolean => a.start < b.end && b.start < a.end;

/**
 * Items that overlap none of the blockers, sorted by start. O((n + m) log m): blockers are merged into disjoint
 * sorted intervals and each item binary-searches the last interval starting before its end. (A naive
 * `filter(some(...))` is quadratic on adversarial inputs.)
 */
export function withoutOverlaps<T extends Span>(items: readonly T[], blockers: readonly Span[]): T[] {
  const sorted = [...items].sort((a, b) => a.start - b.start);
  if (blockers.length === 0) return sorted;
  const merged: Span[] = [];
  for (const b of [...blockers].sort((x, y) => x.start - y.start)) {
    const last = merged[merged.length - 1];
    if (last && b.start <= last.end) last.end = Math.max(last.end, b.end);
    else merged.push({ start: b.start, end: b.end });
  }
  return sorted.filter((it) => {
    let lo = 0;
    let hi = merged.length - 1;
    let idx = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((merged[mid]?.start ?? Infinity) < it.end) {
        idx = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return idx === -1 || (merged[idx]?.end ?? -1) <= it.start;
  });
}

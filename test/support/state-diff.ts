/**
 * Where two canonical state dumps (GraphAdmin.stateLines) differ: the lines only one side has, a few of
 * each, cut short. For an assertion's message when a live state and its rebuild disagree.
 */
export function stateDiff(live: readonly string[], rebuilt: readonly string[], max = 6): string {
  const a = new Set(live);
  const b = new Set(rebuilt);
  const cut = (l: string) => (l.length > 600 ? `${l.slice(0, 600)}…` : l);
  const onlyLive = live.filter((l) => !b.has(l));
  const onlyRebuilt = rebuilt.filter((l) => !a.has(l));
  return [
    `${onlyLive.length} lines only live, ${onlyRebuilt.length} only rebuilt`,
    ...onlyLive.slice(0, max).map((l) => `live:    ${cut(l)}`),
    ...onlyRebuilt.slice(0, max).map((l) => `rebuilt: ${cut(l)}`),
  ].join('\n');
}

// Stewardship: a namespace's scorecard, its owners and stewards (from grants) and the steward's open
// findings (needs the review scope there). Record ids open the timeline.
import { gql } from '../api.js';
import { errorText, facts, field, fmtTime, h, note, table } from '../dom.js';

const QUERY = `query Steward($ns: String!) {
  scorecard(namespace: $ns) { namespace at records live candidates coverage freshness contestRate
    reviewLatencyMs reviewed utility withFeedback openFindings { key count } }
  namespaceStewardship(namespace: $ns) { owners { principal namespace } stewards { principal role namespace } }
  findings(namespace: $ns, first: 200) { id type severity namespace recordIds entityIds reason raisedAt } }`;

const NS_KEY = 'muninn.console.stewardNamespace';
const pct = (x) => (x === null ? '—' : `${(x * 100).toFixed(1)} %`);
const days = (ms) => (ms === null ? '—' : `${(ms / 86_400_000).toFixed(1)} days`);
const who = (refs) => (refs.length ? refs.map((r) => `${r.principal} (${r.namespace})`).join(', ') : 'none');

function scorecard(c, s) {
  return facts([
    ['records', `${c.records} (${c.live} live, ${c.candidates} waiting for review)`],
    ['coverage', `${pct(c.coverage)} of live records about an entity`],
    ['freshness', `${pct(c.freshness)} of live records within validity and review date`],
    ['contest rate', pct(c.contestRate)],
    ['review latency', `${days(c.reviewLatencyMs)} median over ${c.reviewed} approvals`],
    ['utility', c.utility === null ? 'no feedback yet' : `${c.utility} mean over ${c.withFeedback} rated`],
    ['owners', who(s.owners)],
    ['stewards', who(s.stewards)],
    ['computed', fmtTime(c.at)],
  ]);
}

function findingsTable(fs, go) {
  if (!fs.length) return note('ok', 'No open findings here.');
  const ids = (xs) =>
    xs.map((id) => h('a', { href: '#', onclick: (e) => (e.preventDefault(), go('timeline', id)) }, id));
  return table(
    ['type', 'severity', 'namespace', 'records / entities', 'reason', 'raised'],
    fs.map((f) => [
      f.type,
      h('span', { class: `badge sev-${f.severity.toLowerCase()}` }, f.severity),
      f.namespace,
      h('span', { class: 'ids' }, ids(f.recordIds), f.entityIds.join(', ')),
      f.reason,
      fmtTime(f.raisedAt),
    ]),
    { class: 'grid', id: 'steward-findings' },
  );
}

function mount(root, { go }) {
  const ns = h('input', {
    id: 'steward-namespace',
    value: sessionStorage.getItem(NS_KEY) ?? '',
    placeholder: 'acme/platform',
    required: true,
  });
  const out = h('div', { id: 'steward-out' });
  const load = async (e) => {
    e?.preventDefault();
    const namespace = ns.value.trim();
    if (!namespace) return;
    sessionStorage.setItem(NS_KEY, namespace);
    out.replaceChildren(note('info', 'loading…'));
    try {
      const d = await gql(QUERY, { ns: namespace });
      out.replaceChildren(
        h('h3', null, `Scorecard of ${d.scorecard.namespace}`),
        h('div', { id: 'steward-scorecard' }, scorecard(d.scorecard, d.namespaceStewardship)),
        h('h3', null, 'Open findings'),
        findingsTable(d.findings, go),
      );
    } catch (err) {
      out.replaceChildren(note('error', errorText(err)));
    }
  };
  root.append(
    h('h2', null, 'Stewardship'),
    h(
      'form',
      { class: 'row', id: 'steward-form', onsubmit: load },
      field('namespace', ns),
      h('button', { type: 'submit' }, 'Show'),
    ),
    out,
  );
  if (ns.value) void load();
}

export default { id: 'stewardship', title: 'Stewardship', mount };

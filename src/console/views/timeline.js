// A record's timeline across both time axes: each revision is a box from when Muninn recorded it to when
// it was retired (system time, across) by the world time it claims (valid from–to, up). Below: the
// revisions, and the supersessions, contests and extensions that link it to records you may see.
import { gql } from '../api.js';
import { errorText, facts, field, fmtTime, h, note, svg, table } from '../dom.js';

const RECORD = `query Timeline($id: ID!) { record(id: $id) {
  id namespace class status version sensitivity confidence createdAt proposedBy changesetId
  statement { subject predicate object text } validFrom validTo
  history { version status validFrom validTo recordedAt retiredAt reason changesetId statement { text } }
  relations { type direction confidence reason target { id status namespace statement { text } } } } }`;

const W = 720;
const H = 260;
const PAD = { l: 150, r: 16, t: 14, b: 40 };

/** The bitemporal chart: x = system time (recorded → retired), y = world time (valid from → to). */
function chart(history) {
  const now = Date.now();
  const t = (s) => Date.parse(s);
  const xs = history.flatMap((v) => [t(v.recordedAt), v.retiredAt ? t(v.retiredAt) : now]);
  const ys = history.flatMap((v) => [t(v.validFrom), ...(v.validTo ? [t(v.validTo)] : [])]).concat(now);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs, now)];
  const span = Math.max(1, Math.max(...ys) - Math.min(...ys));
  const [y0, y1] = [Math.min(...ys) - span * 0.05, Math.max(...ys) + span * 0.15];
  const X = (ms) => PAD.l + ((ms - x0) / Math.max(1, x1 - x0)) * (W - PAD.l - PAD.r);
  const Y = (ms) => H - PAD.b - ((ms - y0) / Math.max(1, y1 - y0)) * (H - PAD.t - PAD.b);
  const iso = (ms) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
  return svg(
    'svg',
    {
      viewBox: `0 0 ${W} ${H}`,
      class: 'bitemporal',
      id: 'timeline-chart',
      role: 'img',
      'aria-label': 'revisions by system time and world time',
    },
    svg('line', { x1: PAD.l, y1: H - PAD.b, x2: W - PAD.r, y2: H - PAD.b, class: 'axis' }),
    svg('line', { x1: PAD.l, y1: PAD.t, x2: PAD.l, y2: H - PAD.b, class: 'axis' }),
    svg('text', { x: PAD.l, y: H - 8, class: 'tick' }, `${iso(x0)}Z`),
    svg('text', { x: W - PAD.r, y: H - 8, class: 'tick end' }, 'now → system time (recorded)'),
    svg('text', { x: PAD.l - 6, y: H - PAD.b, class: 'tick end' }, `${iso(y0)}Z`),
    svg('text', { x: PAD.l - 6, y: PAD.t + 10, class: 'tick end' }, 'world time (valid) ↑'),
    svg('line', { x1: PAD.l, y1: Y(now), x2: W - PAD.r, y2: Y(now), class: 'now' }),
    history.map((v) => {
      const left = X(t(v.recordedAt));
      const right = X(v.retiredAt ? t(v.retiredAt) : now);
      const top = v.validTo ? Y(t(v.validTo)) : PAD.t;
      const bottom = Y(t(v.validFrom));
      return svg(
        'g',
        { class: `rev ${v.status.toLowerCase()}`, 'data-version': v.version },
        svg(
          'rect',
          { x: left, y: top, width: Math.max(3, right - left), height: Math.max(3, bottom - top) },
          svg(
            'title',
            null,
            `v${v.version} ${v.status}: valid ${fmtTime(v.validFrom)} – ${v.validTo ? fmtTime(v.validTo) : 'open'}; recorded ${fmtTime(v.recordedAt)} – ${v.retiredAt ? fmtTime(v.retiredAt) : 'current'}`,
          ),
        ),
        svg('text', { x: left + 4, y: bottom - 4, class: 'label' }, `v${v.version} ${v.status}`),
      );
    }),
  );
}

const RELATION_NAMES = {
  'SUPERSEDES OUT': 'supersedes',
  'SUPERSEDES IN': 'superseded by',
  'CONTRADICTS OUT': 'contests',
  'CONTRADICTS IN': 'contested by',
  'EXTENDS OUT': 'extends',
  'EXTENDS IN': 'extended by',
};

function relations(rels, go) {
  if (!rels.length) return note('info', 'No supersessions, contests or extensions with records you may see.');
  return table(
    ['relation', 'record', 'its status', 'its text', 'confidence', 'reason'],
    rels.map((r) => [
      RELATION_NAMES[`${r.type} ${r.direction}`] ?? `${r.type} ${r.direction}`,
      r.target
        ? h(
            'a',
            { href: '#', onclick: (e) => (e.preventDefault(), go('timeline', r.target.id)) },
            r.target.id,
          )
        : 'not visible to you',
      r.target?.status ?? '—',
      h('span', { class: 'record-text' }, r.target?.statement.text ?? ''),
      r.confidence.toFixed(2),
      r.reason ?? '',
    ]),
    { class: 'grid', id: 'timeline-relations' },
  );
}

function render(r, go) {
  const s = r.statement;
  return [
    h(
      'h3',
      null,
      h('span', { class: 'badge cls' }, r.class),
      ' ',
      h('span', { class: 'badge' }, r.status),
      ' ',
      r.id,
    ),
    h('p', { class: 'text record-text', id: 'timeline-text' }, s.text),
    facts([
      ['statement', `${s.subject} · ${s.predicate} · ${s.object}`],
      ['namespace', r.namespace],
      ['label', r.sensitivity],
      ['valid', `${fmtTime(r.validFrom)} – ${r.validTo ? fmtTime(r.validTo) : 'open'}`],
      ['created', `${fmtTime(r.createdAt)} by ${r.proposedBy}`],
      ['changeset', r.changesetId],
    ]),
    chart(r.history),
    h('h4', null, `Revisions (${r.history.length})`),
    table(
      ['v', 'status', 'valid from', 'valid to', 'recorded', 'retired', 'text', 'reason'],
      r.history.map((v) => [
        String(v.version),
        v.status,
        fmtTime(v.validFrom),
        v.validTo ? fmtTime(v.validTo) : 'open',
        fmtTime(v.recordedAt),
        v.retiredAt ? fmtTime(v.retiredAt) : 'current',
        h('span', { class: 'record-text' }, v.statement.text),
        v.reason ?? '',
      ]),
      { class: 'grid', id: 'timeline-revisions' },
    ),
    h('h4', null, 'Supersessions, contests, extensions'),
    relations(r.relations, go),
  ];
}

function mount(root, { go, arg }) {
  const id = h('input', { id: 'timeline-id', value: arg ?? '', placeholder: 'record id' });
  const out = h('div', { id: 'timeline-out' });
  async function show(e) {
    e?.preventDefault();
    if (!id.value.trim()) return;
    out.replaceChildren(note('info', 'loading…'));
    try {
      const { record } = await gql(RECORD, { id: id.value.trim() });
      out.replaceChildren(
        ...(record ? render(record, go) : [note('error', 'No such record, or you may not see it.')]),
      );
    } catch (err) {
      out.replaceChildren(note('error', errorText(err)));
    }
  }
  root.append(
    h('h2', null, 'Record timeline'),
    h(
      'form',
      { class: 'row', onsubmit: show },
      field('Record id', id),
      h('button', { type: 'submit' }, 'Show'),
    ),
    out,
  );
  if (arg) void show();
}

export default { id: 'timeline', title: 'Timeline', mount };

// Recall playground: run a recall as yourself and see, for each item, why it was returned, and the
// escaped envelope an agent would put into its prompt.
import { gql } from '../api.js';
import { errorText, facts, field, h, note, table } from '../dom.js';

const RECALL = `query Recall($input: RecallInput!) { recall(input: $input) {
  recallId recipe tokens budget omitted envelope
  items { handle score level headline body contested
    record { id namespace class status }
    why { arms { arm rank } score signals anchor proposedBy changesetId episodes confidence overrode contestedWith } } } }`;

const num = (x) =>
  typeof x === 'number' ? (Number.isInteger(x) ? String(x) : x.toFixed(4)) : JSON.stringify(x);

function why(w) {
  return h(
    'details',
    { class: 'why', open: true },
    h('summary', null, 'why'),
    facts([
      ['arms', w.arms.map((a) => `${a.arm} #${a.rank}`).join(', ') || '—'],
      ['score', num(w.score)],
      ['confidence', num(w.confidence)],
      ['anchor', w.anchor],
      ['proposed by', w.proposedBy],
      ['changeset', w.changesetId],
      ['episodes', w.episodes.join(', ')],
      ['contested with', w.contestedWith.join(', ')],
      [
        'overrode',
        Array.isArray(w.overrode) && w.overrode.length
          ? w.overrode.map((o) => `${o.id ?? '?'} (${o.rule ?? ''})`).join(', ')
          : '',
      ],
    ]),
    table(
      ['signal', 'value', 'weight', 'contribution'],
      Object.entries(w.signals ?? {}).map(([k, v]) =>
        v && typeof v === 'object'
          ? [k, num(v.value), num(v.weight), num(v.contribution)]
          : [k, num(v), '', ''],
      ),
      { class: 'grid signals' },
    ),
  );
}

function item(it, i, go) {
  return h(
    'li',
    { class: 'card recall-item', dataset: { id: it.record.id } },
    h(
      'div',
      { class: 'card-head' },
      h('span', { class: 'rank' }, `#${i + 1}`),
      h('span', { class: 'badge cls' }, it.record.class),
      h('span', { class: 'badge' }, it.level),
      it.contested ? h('span', { class: 'badge bad' }, 'contested') : null,
      h('span', { class: 'ns' }, it.record.namespace),
      h('a', { href: '#', onclick: (e) => (e.preventDefault(), go('timeline', it.record.id)) }, it.record.id),
    ),
    h('p', { class: 'text record-text' }, it.body),
    why(it.why),
  );
}

function mount(root, { go }) {
  const q = h('textarea', { id: 'recall-query', rows: 2, placeholder: 'what the agent is about to do' });
  const ns = h('input', { id: 'recall-namespace', placeholder: 'acme/platform' });
  const purpose = h('input', { id: 'recall-purpose', value: 'operator-console' });
  const recipe = h(
    'select',
    { id: 'recall-recipe' },
    ['hybrid', 'bm25', 'vector'].map((r) => h('option', { value: r }, r)),
  );
  const budget = h('input', { id: 'recall-budget', type: 'number', value: '1500', min: '50' });
  const validAt = h('input', { id: 'recall-validAt', placeholder: 'now (ISO-8601, optional)' });
  const knownAt = h('input', { id: 'recall-knownAt', placeholder: 'now (ISO-8601, optional)' });
  const out = h('div', { id: 'recall-out' });

  async function run(e) {
    e.preventDefault();
    out.replaceChildren(note('info', 'recalling…'));
    const asOf = {};
    if (validAt.value.trim()) asOf.validAt = validAt.value.trim();
    if (knownAt.value.trim()) asOf.knownAt = knownAt.value.trim();
    try {
      const { recall: r } = await gql(RECALL, {
        input: {
          query: q.value,
          namespace: ns.value.trim(),
          purpose: purpose.value.trim(),
          recipe: recipe.value,
          tokenBudget: Number(budget.value),
          ...(Object.keys(asOf).length ? { asOf } : {}),
        },
      });
      out.replaceChildren(...result(r, go));
    } catch (err) {
      out.replaceChildren(note('error', errorText(err)));
    }
  }

  root.append(
    h('h2', null, 'Recall playground'),
    form({ q, ns, purpose, recipe, budget, validAt, knownAt }, run),
    out,
  );
}

function form(f, run) {
  return h(
    'form',
    { class: 'stack', onsubmit: run },
    field('Query', f.q),
    h(
      'div',
      { class: 'row' },
      field('Namespace', f.ns),
      field('Purpose', f.purpose),
      field('Recipe', f.recipe),
      field('Token budget', f.budget),
    ),
    h(
      'div',
      { class: 'row' },
      field('Valid at (world time)', f.validAt),
      field('Known at (system time)', f.knownAt),
    ),
    h('button', { type: 'submit', id: 'recall-run' }, 'Recall'),
  );
}

/** The summary line, the items with why each was returned, and the envelope. */
function result(r, go) {
  return [
    h(
      'p',
      { class: 'muted', id: 'recall-summary' },
      `${r.items.length} items · ${r.tokens}/${r.budget} tokens · ${r.omitted} omitted · recipe ${r.recipe} · recall ${r.recallId}`,
    ),
    r.items.length
      ? h(
          'ol',
          { class: 'cards', id: 'recall-items' },
          r.items.map((it, i) => item(it, i, go)),
        )
      : note('info', 'Nothing visible to you matches.'),
    h('h3', null, 'Envelope'),
    h('pre', { class: 'envelope', id: 'recall-envelope' }, r.envelope),
  ];
}

export default { id: 'recall', title: 'Recall', mount };

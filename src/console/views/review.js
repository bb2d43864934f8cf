// Review queue: proposals waiting in a namespace subtree arrive live (the reviewQueue subscription);
// approve is a compare-and-swap on the version shown, reject needs a reason.
import { gql, subscribe } from '../api.js';
import { errorText, facts, field, fmtTime, h, note } from '../dom.js';

const FEED = `subscription Queue($ns: String!) { reviewQueue(namespace: $ns) {
  id version reasons flags proposedBy createdAt
  record { id namespace class sensitivity confidence statement { subject predicate object text } } } }`;
const APPROVE = `mutation Approve($input: ApproveInput!) { approve(input: $input) { outcome recordId version reason } }`;
const REJECT = `mutation Reject($input: RejectInput!) { reject(input: $input) { outcome recordId version reason } }`;

const NS_KEY = 'muninn.console.reviewNamespace';

function mount(root, { go }) {
  const ns = h('input', {
    id: 'review-namespace',
    value: sessionStorage.getItem(NS_KEY) ?? '',
    placeholder: 'acme/platform',
    required: true,
  });
  const status = h('p', { class: 'live', id: 'review-live' }, 'not watching');
  const list = h('ol', { class: 'cards', id: 'review-list' });
  const log = h('div', { id: 'review-log', class: 'log' });
  const cards = new Map();
  const view = { list, log, cards, go };
  let stop = () => undefined;

  function watch(e) {
    e?.preventDefault();
    stop();
    cards.clear();
    list.replaceChildren();
    const namespace = ns.value.trim();
    if (!namespace) return;
    sessionStorage.setItem(NS_KEY, namespace);
    status.textContent = `watching ${namespace} (live)`;
    status.className = 'live on';
    empty(view);
    stop = subscribe(
      FEED,
      { ns: namespace },
      ({ reviewQueue: p }) => show(view, p),
      (err) => {
        status.textContent = `stopped: ${errorText(err)}`;
        status.className = 'live off';
      },
    );
  }

  root.append(
    h('h2', null, 'Review queue'),
    h(
      'form',
      { class: 'row', onsubmit: watch },
      field('Namespace (subtree)', ns),
      h('button', { type: 'submit' }, 'Watch'),
    ),
    status,
    list,
    h('h3', null, 'Decisions'),
    log,
  );
  if (ns.value) watch();
  return () => stop();
}

function empty({ cards, list }) {
  if (cards.size === 0) list.replaceChildren(h('li', { class: 'empty' }, 'Nothing waits for review here.'));
  else list.querySelector('.empty')?.remove();
}

/** A proposal as the feed sends it: a new card, or one that replaces the proposal's card. */
function show(view, p) {
  const el = card(view, p);
  view.cards.get(p.id)?.replaceWith(el);
  if (!view.cards.has(p.id)) view.list.append(el);
  view.cards.set(p.id, el);
  empty(view);
}

function card(view, p) {
  const reason = h('input', { placeholder: 'reason for rejecting', class: 'reason' });
  const out = h('div', { class: 'card-result' });
  const s = p.record.statement;
  return h(
    'li',
    { class: 'card', dataset: { id: p.id, version: String(p.version) } },
    h(
      'div',
      { class: 'card-head' },
      h('span', { class: `badge cls` }, p.record.class),
      h('span', { class: 'badge' }, p.record.sensitivity),
      h('span', { class: 'ns' }, p.record.namespace),
    ),
    h('p', { class: 'text record-text' }, s.text),
    facts([
      ['statement', `${s.subject} · ${s.predicate} · ${s.object}`],
      ['why it waits', p.reasons.join('; ') || '—'],
      ['flags', p.flags.join(', ') || '—'],
      ['proposed by', p.proposedBy],
      ['proposed at', fmtTime(p.createdAt)],
      [
        'record',
        h(
          'a',
          { href: '#', onclick: (e) => (e.preventDefault(), view.go('timeline', p.record.id)) },
          `${p.record.id} v${p.version}`,
        ),
      ],
    ]),
    actions(view, p, reason, out),
    out,
  );
}

function actions(view, p, reason, out) {
  return h(
    'div',
    { class: 'actions' },
    h(
      'button',
      {
        class: 'approve',
        onclick: () =>
          act(view, p, out, APPROVE, { proposalId: p.id, expectedVersion: p.version }, 'approving'),
      },
      'Approve',
    ),
    reason,
    h(
      'button',
      {
        class: 'reject',
        onclick: () =>
          reason.value.trim()
            ? act(
                view,
                p,
                out,
                REJECT,
                { proposalId: p.id, expectedVersion: p.version, reason: reason.value.trim() },
                'rejecting',
              )
            : out.replaceChildren(note('error', 'a rejection needs a reason')),
      },
      'Reject',
    ),
  );
}

async function act(view, p, out, doc, input, verb) {
  out.replaceChildren(note('info', `${verb}…`));
  try {
    const data = await gql(doc, { input });
    const r = data.approve ?? data.reject;
    // a stale version (CONFLICT) or a refused approval keeps the card, with the reason
    if (r.outcome === 'CONFLICT' || (verb === 'approving' && r.outcome === 'REJECTED'))
      throw new Error(`${r.outcome}: ${r.reason ?? ''}`);
    view.log.prepend(
      note('ok', `${p.record.id} v${p.version}: ${r.outcome}${r.reason ? ` — ${r.reason}` : ''}`),
    );
    view.cards.get(p.id)?.remove();
    view.cards.delete(p.id);
    empty(view);
  } catch (e) {
    out.replaceChildren(note('error', errorText(e)));
  }
}

export default { id: 'review', title: 'Review', mount };

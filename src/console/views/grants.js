// Grants: the tenant's namespace grants (listing needs the admin scope), with grant and revoke.
import { gql } from '../api.js';
import { errorText, field, fmtTime, h, note, table } from '../dom.js';

const LIST = `{ grants { id grantee namespace maxSensitivity purposes grantedBy grantedAt revokedAt revokeReason } }`;
const GRANT = `mutation Grant($input: GrantAccessInput!) { grantAccess(input: $input) { outcome grantId reason } }`;
const REVOKE = `mutation Revoke($input: RevokeAccessInput!) { revokeAccess(input: $input) { outcome grantId reason } }`;
const LABELS = ['PUBLIC', 'INTERNAL', 'CONFIDENTIAL', 'RESTRICTED'];

function mount(root) {
  const view = { out: h('div', { id: 'grants-out' }), status: h('div', { id: 'grants-status' }) };
  root.append(h('h2', null, 'Grants'), view.status, view.out);
  void load(view);
}

function done(view, what, r) {
  if (r.outcome === 'ADMITTED') view.status.replaceChildren(note('ok', `${what}: ${r.grantId ?? ''}`));
  else view.status.replaceChildren(note('error', `${what}: ${r.outcome}${r.reason ? ` — ${r.reason}` : ''}`));
}

function row(view, g) {
  const reason = h('input', { placeholder: 'reason', class: 'reason' });
  const revoke = async () => {
    if (!reason.value.trim()) return view.status.replaceChildren(note('error', 'revoking needs a reason'));
    try {
      done(
        view,
        'revoked',
        (await gql(REVOKE, { input: { grantId: g.id, reason: reason.value.trim() } })).revokeAccess,
      );
      await load(view);
    } catch (e) {
      view.status.replaceChildren(note('error', errorText(e)));
    }
  };
  return [
    g.grantee,
    g.namespace,
    g.maxSensitivity,
    g.purposes ? g.purposes.join(', ') : 'any',
    `${fmtTime(g.grantedAt)} by ${g.grantedBy}`,
    g.revokedAt
      ? `revoked ${fmtTime(g.revokedAt)}: ${g.revokeReason ?? ''}`
      : h(
          'span',
          { class: 'actions' },
          reason,
          h('button', { class: 'reject', onclick: revoke, dataset: { grant: g.id } }, 'Revoke'),
        ),
  ];
}

async function load(view) {
  try {
    const { grants } = await gql(LIST);
    view.out.replaceChildren(
      grants.length
        ? table(
            ['grantee', 'namespace', 'up to', 'purposes', 'granted', 'state'],
            grants.map((g) => row(view, g)),
            { class: 'grid', id: 'grants-table' },
          )
        : note('info', 'No grants: every member reads the tenant up to the default clearance.'),
      form(view),
    );
  } catch (e) {
    view.out.replaceChildren(
      note(
        'error',
        e.code === 'FORBIDDEN' ? 'Listing and changing grants needs the admin scope.' : errorText(e),
      ),
    );
  }
}

function form(view) {
  const sub = h('input', { id: 'grant-sub', placeholder: 'alice', required: true });
  const iss = h('input', { id: 'grant-iss', placeholder: 'default: yours' });
  const ns = h('input', { id: 'grant-namespace', placeholder: 'acme/platform', required: true });
  const label = h(
    'select',
    { id: 'grant-label' },
    LABELS.map((l) => h('option', { value: l, selected: l === 'INTERNAL' }, l)),
  );
  const purposes = h('input', { id: 'grant-purposes', placeholder: 'any (or: incident, code-change)' });
  const reason = h('input', { id: 'grant-reason', placeholder: 'why', required: true });
  const submit = async (e) => {
    e.preventDefault();
    const list = purposes.value
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    try {
      const input = {
        grantee: { sub: sub.value.trim(), ...(iss.value.trim() ? { iss: iss.value.trim() } : {}) },
        namespace: ns.value.trim(),
        maxSensitivity: label.value,
        ...(list.length ? { purposes: list } : {}),
        reason: reason.value.trim(),
        idempotencyKey: crypto.randomUUID(),
      };
      done(view, 'granted', (await gql(GRANT, { input })).grantAccess);
      await load(view);
    } catch (err) {
      view.status.replaceChildren(note('error', errorText(err)));
    }
  };
  return h(
    'form',
    { class: 'stack', id: 'grant-form', onsubmit: submit },
    h('h3', null, 'Grant access'),
    h(
      'div',
      { class: 'row' },
      field('Grantee sub', sub),
      field('Issuer', iss),
      field('Namespace (subtree)', ns),
      field('Up to label', label),
    ),
    h(
      'div',
      { class: 'row' },
      field('Purposes', purposes),
      field('Reason', reason),
      h('button', { type: 'submit' }, 'Grant'),
    ),
  );
}

export default { id: 'grants', title: 'Grants', mount };

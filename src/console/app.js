// The console's shell: sign-in with a pasted token, a hash router (#review, #timeline/<id> …) and the views.
import { claims, token } from './api.js';
import { h, note } from './dom.js';
import review from './views/review.js';
import lag from './views/lag.js';
import recall from './views/recall.js';
import timeline from './views/timeline.js';
import grants from './views/grants.js';
import stewardship from './views/stewardship.js';

const VIEWS = [review, lag, recall, timeline, grants, stewardship];
const $ = (id) => document.getElementById(id);

let unmount = () => undefined;

/** Go to a view, optionally with an argument (a record id for the timeline). */
export function go(id, arg) {
  const hash = `#${id}${arg ? `/${encodeURIComponent(arg)}` : ''}`;
  if (window.location.hash === hash) route();
  else window.location.hash = hash;
}

function route() {
  const [id, arg] = window.location.hash.slice(1).split('/');
  const view = VIEWS.find((v) => v.id === id) ?? VIEWS[0];
  for (const a of $('nav').querySelectorAll('a'))
    a.setAttribute('aria-current', a.dataset.view === view.id ? 'page' : 'false');
  unmount();
  unmount = () => undefined;
  const root = $('view');
  root.replaceChildren();
  if (!token.get()) {
    root.append(
      note(
        'info',
        'Paste a bearer token above to start (e.g. ./bin/muninn token --tenant acme --sub you --scopes read,review).',
      ),
    );
    return;
  }
  root.dataset.view = view.id;
  unmount = view.mount(root, { go, arg: arg ? decodeURIComponent(arg) : undefined }) ?? (() => undefined);
}

function showIdentity() {
  const c = claims();
  $('signin').hidden = c !== null;
  $('whoami').hidden = c === null;
  if (c) {
    const expires = c.exp
      ? `, expires ${new Date(c.exp * 1000).toISOString().slice(0, 16).replace('T', ' ')}Z`
      : '';
    $('whoami-text').textContent =
      `${c.sub} @ ${c.tenant} — scopes: ${c.scopes.join(', ') || 'none'}${expires}`;
  }
}

function start() {
  $('nav').append(...VIEWS.map((v) => h('a', { href: `#${v.id}`, dataset: { view: v.id } }, v.title)));
  $('signin').addEventListener('submit', (e) => {
    e.preventDefault();
    const t = $('token-input')
      .value.trim()
      .replace(/^Bearer\s+/i, '');
    $('token-input').value = '';
    if (!t) return;
    token.set(t);
    showIdentity();
    route();
  });
  $('signout').addEventListener('click', () => {
    token.clear();
    showIdentity();
    route();
  });
  window.addEventListener('hashchange', route);
  showIdentity();
  route();
}

start();

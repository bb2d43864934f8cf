// DOM helpers. Every piece of data reaches the page as a text node or a property value, never as
// markup: there is no innerHTML anywhere in the console, so a record's text cannot become an element.

/**
 * h('div', { class: 'x', onclick: fn }, 'text', child) → an element. Strings and numbers become text
 * nodes; null, undefined and false are skipped; arrays are flattened.
 * @param {string} tag
 * @param {Record<string, unknown> | null} [props]
 * @param {...unknown} children
 * @returns {HTMLElement}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  setProps(el, props);
  append(el, children);
  return el;
}

/** The same for SVG elements (attributes only, set as attribute values, never parsed). */
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs ?? {}))
    if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  append(el, children);
  return el;
}

function setProps(el, props) {
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (/html/i.test(k)) throw new Error(`refusing to set ${k}: data is text, never markup`);
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k in el && k !== 'list') el[k] = v;
    else el.setAttribute(k, String(v));
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** A labelled form field. */
export function field(label, input) {
  return h('label', { class: 'field' }, h('span', null, label), input);
}

/** A status line inside a view: kind is 'info', 'ok' or 'error'. */
export function note(kind, text) {
  return h('p', { class: `note ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** An error from api.js as one line: the message and its stable code. */
export function errorText(e) {
  const code = e && typeof e === 'object' && 'code' in e ? ` (${e.code})` : '';
  return `${e instanceof Error ? e.message : String(e)}${code}`;
}

/** A definition list from [term, value] pairs; values may be nodes. */
export function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs
      .filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([k, v]) => [h('dt', null, k), h('dd', null, v)]),
  );
}

/** A table from column headings and rows of cells (strings or nodes). */
export function table(headings, rows, props) {
  return h(
    'table',
    props ?? null,
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        headings.map((x) => h('th', { scope: 'col' }, x)),
      ),
    ),
    h(
      'tbody',
      null,
      rows.map((r) =>
        h(
          'tr',
          null,
          r.map((c) => h('td', null, c)),
        ),
      ),
    ),
  );
}

export const fmtTime = (iso) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '—');

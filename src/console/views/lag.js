// Projection lag per partition, live (the projectionLag subscription), with the total's recent history.
import { subscribe } from '../api.js';
import { errorText, fmtTime, h, note, svg, table } from '../dom.js';

const FEED = `subscription Lag { projectionLag(intervalMs: 1000) {
  healthy totalLag partitions { partition checkpoint highWatermark lag } } }`;
const HISTORY = 60;

function sparkline(values) {
  const w = 300;
  const hgt = 48;
  const max = Math.max(1, ...values);
  const bw = w / HISTORY;
  return svg(
    'svg',
    {
      viewBox: `0 0 ${w} ${hgt}`,
      class: 'spark',
      role: 'img',
      'aria-label': `total lag, last ${values.length} seconds`,
    },
    values.map((v, i) => {
      const bh = Math.max(1, (v / max) * (hgt - 2));
      return svg('rect', {
        x: (HISTORY - values.length + i) * bw,
        y: hgt - bh,
        width: bw - 1,
        height: bh,
        class: v > 0 ? 'lagging' : 'caught-up',
      });
    }),
  );
}

function mount(root) {
  const body = h('div', { id: 'lag-body' }, note('info', 'connecting…'));
  const history = [];
  root.append(h('h2', null, 'Projection lag'), body);
  const stop = subscribe(
    FEED,
    {},
    ({ projectionLag: s }) => {
      const head = h(
        'div',
        { class: 'row' },
        h(
          'span',
          { class: `badge ${s.healthy ? 'ok' : 'bad'}`, id: 'lag-health' },
          s.healthy ? 'projector healthy' : 'projector NOT healthy',
        ),
        s.totalLag === null ? null : h('span', { class: 'big', id: 'lag-total' }, `total lag ${s.totalLag}`),
        h('span', { class: 'muted', id: 'lag-updated' }, `updated ${fmtTime(new Date().toISOString())}`),
      );
      // Offsets and lag are shown to admins only; anyone else learns whether the projector is healthy.
      if (s.totalLag === null) {
        body.replaceChildren(
          head,
          note('info', 'Offsets and lag per partition are shown to tokens with the admin scope.'),
        );
        return;
      }
      history.push(s.totalLag);
      if (history.length > HISTORY) history.shift();
      body.replaceChildren(
        head,
        table(
          ['partition', 'checkpoint (last applied offset)', 'high watermark', 'lag'],
          s.partitions.map((p) => [
            String(p.partition),
            p.checkpoint,
            p.highWatermark,
            h('span', { class: p.lag > 0 ? 'lagging' : '' }, String(p.lag)),
          ]),
          { id: 'lag-table', class: 'grid' },
        ),
        h('p', { class: 'muted' }, `Total lag over the last ${history.length} s`),
        sparkline(history),
      );
    },
    (e) => body.replaceChildren(note('error', errorText(e))),
  );
  return () => stop();
}

export default { id: 'lag', title: 'Projection lag', mount };

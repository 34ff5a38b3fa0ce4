// xcc view: the page's own script. Reads the JSON in #xcc-data and draws a run (topology,
// time slider, link and flow plots, tables), a compare directory, a sweep or the reproduction
// index. Plots are plotly.js (inlined); the topology is plain SVG so that a thousand links stay
// cheap to recolour. Sets window.xccReady when everything is drawn (the browser tests wait on it).
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('xcc-data').textContent);
  const app = document.getElementById('app');
  const SVGNS = 'http://www.w3.org/2000/svg';
  const PLOT_CONFIG = { displaylogo: false, responsive: true };
  const RUN_COLOURS = ['#1565c0', '#e65100'];

  // -- small helpers ----------------------------------------------------------------------
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  }
  function svg(tag, attrs) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }
  function bytes(b64) {
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  function f32(b64) {
    if (b64 == null) return null;
    const b = bytes(b64);
    return Array.from(new Float32Array(b.buffer, 0, b.length / 4), (v) => (isNaN(v) ? null : v));
  }
  function scaled(arr, k) { return arr.map((v) => (v == null ? null : v * k)); }
  function fmtRate(bps) {
    if (bps == null) return '-';
    for (const [k, u] of [[1e9, 'Gbit/s'], [1e6, 'Mbit/s'], [1e3, 'kbit/s']]) {
      if (bps >= k) return +(bps / k).toPrecision(3) + ' ' + u;
    }
    return bps + ' bit/s';
  }
  function fmtTime(s) {
    if (s == null) return '-';
    if (s === 0) return '0 s';
    if (s < 1e-3) return +(s * 1e6).toPrecision(3) + ' µs';
    if (s < 1) return +(s * 1e3).toPrecision(3) + ' ms';
    return +s.toPrecision(4) + ' s';
  }
  function fmtCell(v) {
    if (v == null) return '-';
    if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(+v.toPrecision(4));
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    return String(v);
  }
  // Utilisation 0 -> blue, 0.5 -> green, 1 -> red (hue 210 -> 0).
  function utilColour(u) {
    const x = Math.max(0, Math.min(1, u));
    return 'hsl(' + Math.round(210 * (1 - x)) + ',75%,45%)';
  }

  function tableEl(t, onRow) {
    const head = el('tr', {}, ...t.columns.map((c) => el('th', {}, c)));
    const rows = t.rows.map((r) => {
      const tr = el('tr', {}, ...r.map((v) => el('td', typeof v === 'number' ? { class: 'num' } : {}, fmtCell(v))));
      if (onRow) {
        tr.classList.add('clickable');
        tr.addEventListener('click', () => onRow(r));
      }
      return tr;
    });
    const note = t.total > t.rows.length
      ? el('p', { class: 'hint' }, t.rows.length + ' of ' + t.total + ' rows shown' +
        (t.sorted_by ? ', largest ' + t.sorted_by + ' first' : ''))
      : '';
    return el('div', {}, el('div', { class: 'tablewrap' },
      el('table', { class: 'summary', 'data-table': t.name }, head, ...rows)), note);
  }

  // -- a run (or several runs of one network: compare) --------------------------------------
  // runs[0] gives the drawing; each run has its own frames and series. The slider colours the
  // links by the run chosen in "colour by"; a clicked link or flow plots every run overlaid.
  function RunView(container, runs) {
    const base = runs[0];
    const view = el('div', { class: 'runview' });
    container.append(view);
    const decoded = runs.map(decodeRun);
    let active = 0;
    let frame = 0;
    let timer = null;
    let selected = null;

    if (base.notes && base.notes.length) {
      view.append(el('ul', { class: 'notes' }, ...base.notes.map((n) => el('li', {}, n))));
    }
    const topo = el('div', { class: 'topo' });
    const detail = el('div', { class: 'detail' });
    view.append(el('div', { class: 'topo-row' }, topo, detail));

    // controls
    const slider = el('input', { type: 'range', min: 0, max: 0, value: 0, step: 1, class: 'slider' });
    const play = el('button', { type: 'button', class: 'play' }, 'play');
    const clock = el('span', { class: 'clock' }, '');
    const controls = el('div', { class: 'controls' }, play, slider, clock);
    if (runs.length > 1) {
      const pick = el('select', { class: 'colour-by' },
        ...runs.map((r, i) => el('option', { value: i }, r.label)));
      pick.addEventListener('change', () => { active = +pick.value; setupSlider(); paint(); });
      controls.prepend(el('label', {}, 'colour by ', pick));
    }
    topo.append(controls, el('div', { class: 'legend' },
      'line colour: utilisation 0 ', el('span', { class: 'bar' }), ' 100 %; ' +
      'thickness: queue (fraction of the buffer). Click a link for its plots.'));

    const { svgEl, lines } = drawTopology(base);
    topo.append(svgEl);
    detail.append(el('p', { class: 'hint link-hint' }, 'Click a link to plot its queue, ' +
      'utilisation, drops and marks' + (base.links.some((l) => l.explicit)
        ? ' and the rate or price it advertises.' : '.')));
    const linkPlot = el('div', { class: 'link-plot' });
    const flowPlot = el('div', { class: 'flow-plot' });
    detail.append(linkPlot, flowPlot);

    function setupSlider() {
      const fr = decoded[active].frames;
      slider.max = fr ? fr.t.length - 1 : 0;
      slider.disabled = !fr;
      play.disabled = !fr;
      frame = Math.min(frame, +slider.max);
      slider.value = frame;
    }
    function paint() {
      const fr = decoded[active].frames;
      const n = base.links.length;
      if (!fr) {
        clock.textContent = 'no time series in this run (metrics interval 0)';
        for (let j = 0; j < n; j++) lines[j].setAttribute('stroke', '#9e9e9e');
        return;
      }
      for (let j = 0; j < n; j++) {
        const u = fr.util[frame * n + j] / fr.util_scale;
        const q = fr.queue[frame * n + j] / 255;
        lines[j].setAttribute('stroke', utilColour(u));
        lines[j].setAttribute('stroke-width', (2 + 7 * q).toFixed(1));
      }
      clock.textContent = 't = ' + fmtTime(fr.t[frame]) + ' (' + runs[active].label + ')';
    }
    slider.addEventListener('input', () => { frame = +slider.value; paint(); });
    play.addEventListener('click', () => {
      if (timer) { clearInterval(timer); timer = null; play.textContent = 'play'; return; }
      play.textContent = 'pause';
      timer = setInterval(() => {
        const max = +slider.max;
        frame = frame >= max ? 0 : frame + 1;
        slider.value = frame;
        paint();
      }, 80);
    });
    lines.forEach((line, j) => line.addEventListener('click', () => showLink(j)));
    setupSlider();
    paint();

    function showLink(j) {
      if (selected != null) lines[selected].classList.remove('selected');
      selected = j;
      lines[j].classList.add('selected');
      const dl = base.links[j];
      const lid = busiestMember(dl, decoded[0]);
      const traces = [];
      const gauge = decoded[0].linkSeries && decoded[0].linkSeries.gauges[lid];
      const rows = gauge ? 4 : 3;
      runs.forEach((r, i) => {
        const ls = decoded[i].linkSeries;
        const s = ls && ls.link(lid);
        if (!s) return;
        const c = RUN_COLOURS[i % RUN_COLOURS.length];
        const name = runs.length > 1 ? r.label : null;
        const common = { x: ls.t, mode: 'lines', line: { color: c, width: 1.2 },
          legendgroup: r.label, showlegend: false };
        traces.push({ ...common, y: scaled(s.queue_bytes, 1e-3), name: name || 'queue',
          yaxis: 'y', showlegend: runs.length > 1 });
        traces.push({ ...common, y: scaled(s.utilisation, 100), name: name || 'utilisation', yaxis: 'y2' });
        traces.push({ ...common, y: s.drops, name: (name ? name + ' ' : '') + 'drops', yaxis: 'y3' });
        traces.push({ ...common, y: s.marks, name: (name ? name + ' ' : '') + 'marks', yaxis: 'y3',
          line: { color: c, width: 1.2, dash: 'dot' } });
        if (gauge) traces.push({ ...common, y: scaled(s.gauge, gauge.scale), name: name || gauge.label, yaxis: 'y4' });
      });
      const member = dl.members.length > 1 ? ' (busiest of ' + dl.members.length + ': ' + linkName(lid) + ')' : '';
      const layout = stackedLayout(rows, [
        'queue (kB)', 'utilisation (%)', 'drops, marks (dotted)',
        gauge ? gauge.label + (gauge.unit ? ' (' + gauge.unit + ')' : '') : null,
      ]);
      layout.title = { text: dl.name + member + ' · ' + fmtRate(dl.rate_bps) + ', ' +
        fmtTime(dl.delay_s) + ', ' + dl.algorithm, font: { size: 13 } };
      linkPlot.setAttribute('data-link', dl.name);
      if (!traces.length) {
        linkPlot.replaceChildren(el('p', { class: 'hint' }, dl.name + ': no time series in this run'));
        return;
      }
      linkPlot.replaceChildren();
      linkPlot.removeAttribute('data-drawn');
      Plotly.newPlot(linkPlot, traces, layout, PLOT_CONFIG)
        .then(() => linkPlot.setAttribute('data-drawn', dl.name));
    }
    function linkName(lid) {
      const ls = base.link_series;
      return (ls && ls.names && ls.names[lid]) || 'link ' + lid;
    }

    function showFlow(fid) {
      const traces = [];
      let hasCwnd = false;
      let name = 'flow ' + fid;
      const ft = base.tables.find((x) => x.name === 'flows');
      const row = ft && ft.rows.find((r) => r[0] === fid);
      if (row) name = row[1];
      runs.forEach((r, i) => {
        const fsr = decoded[i].flowSeries;
        const f = fsr && fsr.flow(fid);
        if (!f) return;
        const c = RUN_COLOURS[i % RUN_COLOURS.length];
        const common = { x: f.t, mode: 'lines', line: { color: c, width: 1.2 },
          legendgroup: r.label, name: runs.length > 1 ? r.label : 'rate', showlegend: runs.length > 1 };
        traces.push({ ...common, y: scaled(f.rate_bps, 1e-6), yaxis: 'y' });
        if (f.maxmin_bps != null && i === 0) {
          traces.push({ x: [f.t[0], f.t[f.t.length - 1]], y: [f.maxmin_bps / 1e6, f.maxmin_bps / 1e6],
            mode: 'lines', name: 'max-min', line: { color: '#555', dash: 'dash', width: 1 }, yaxis: 'y' });
        }
        if (f.cwnd_bytes) {
          hasCwnd = true;
          traces.push({ ...common, y: scaled(f.cwnd_bytes, 1e-3), yaxis: 'y2', showlegend: false });
        }
        traces.push({ ...common, y: scaled(f.srtt_s, 1e3), yaxis: hasCwnd ? 'y3' : 'y2', showlegend: false });
      });
      const labels = hasCwnd ? ['rate (Mbit/s)', 'cwnd (kB)', 'RTT (ms)'] : ['rate (Mbit/s)', 'RTT (ms)'];
      const layout = stackedLayout(labels.length, labels);
      layout.title = { text: name + (row ? ' · ' + row[2] + ' → ' + row[3] + ', ' + row[4] : ''), font: { size: 13 } };
      flowPlot.setAttribute('data-flow', name);
      if (!traces.length) {
        flowPlot.replaceChildren(el('p', { class: 'hint' }, name + ': no time series in this run'));
        return;
      }
      flowPlot.replaceChildren();
      flowPlot.removeAttribute('data-drawn');
      Plotly.newPlot(flowPlot, traces, layout, PLOT_CONFIG)
        .then(() => flowPlot.setAttribute('data-drawn', name));
    }

    // tables of the first run (a compare page shows its own differences tables instead)
    if (runs.length === 1) {
      for (const t of base.tables) {
        const onRow = t.kind === 'flow' ? (r) => showFlow(r[0])
          : t.kind === 'link' ? (r) => {
            const j = base.links.findIndex((l) => l.members.includes(r[0]));
            if (j >= 0) showLink(j);
          } : null;
        view.append(el('h2', {}, t.name + (t.kind ? ' (click a row for its plots)' : '')), tableEl(t, onRow));
      }
    } else {
      const ft = base.tables.find((x) => x.name === 'flows');
      if (ft) view.append(el('h2', {}, 'flows (click a row: both runs overlaid)'), tableEl(ft, (r) => showFlow(r[0])));
    }
    if (base.sessions) drawSessions(view, base.sessions);
    return { showLink, showFlow, view };
  }

  // The slider's frames are decoded at once; a link's or flow's series only when it is first
  // plotted (a run with a thousand links opens without decoding a million numbers).
  function decodeRun(r) {
    const out = { frames: null, linkSeries: null, flowSeries: null };
    if (r.frames) {
      out.frames = { t: r.frames.t, util: bytes(r.frames.util), queue: bytes(r.frames.queue),
        util_scale: r.frames.util_scale };
    }
    if (r.link_series) {
      const raw = r.link_series;
      const cache = new Map();
      let t = null;
      out.linkSeries = {
        gauges: raw.gauges,
        get t() { return t || (t = f32(raw.t)); },
        link(lid) {
          const key = String(lid);
          if (!raw.links[key]) return null;
          if (!cache.has(key)) {
            const s = {};
            for (const [k, v] of Object.entries(raw.links[key])) s[k] = f32(v);
            cache.set(key, s);
          }
          return cache.get(key);
        },
      };
    }
    if (r.flow_series) {
      const raw = r.flow_series.flows;
      const cache = new Map();
      out.flowSeries = {
        flow(fid) {
          const key = String(fid);
          const f = raw[key];
          if (!f) return null;
          if (!cache.has(key)) {
            cache.set(key, { t: f32(f.t), rate_bps: f32(f.rate_bps), srtt_s: f32(f.srtt_s),
              cwnd_bytes: f.cwnd_bytes ? f32(f.cwnd_bytes) : null, maxmin_bps: f.maxmin_bps });
          }
          return cache.get(key);
        },
      };
    }
    return out;
  }

  function busiestMember(dl, dec) {
    if (dl.members.length === 1 || !dec.linkSeries) return String(dl.members[0]);
    let best = dl.members[0];
    let bestLoad = -1;
    for (const m of dl.members) {
      const s = dec.linkSeries.link(m);
      if (!s) continue;
      const load = s.utilisation.reduce((a, v) => a + (v || 0), 0);
      if (load > bestLoad) { bestLoad = load; best = m; }
    }
    return String(best);
  }

  // Panels stacked on one shared x axis: zooming one zooms all (linked plots).
  function stackedLayout(rows, labels) {
    const layout = { height: 150 + 140 * rows, margin: { l: 60, r: 10, t: 40, b: 40 },
      showlegend: true, legend: { orientation: 'h', y: -0.12 }, hovermode: 'x unified' };
    const gap = 0.04;
    const h = (1 - gap * (rows - 1)) / rows;
    for (let i = 0; i < rows; i++) {
      const key = i === 0 ? 'yaxis' : 'yaxis' + (i + 1);
      const top = 1 - i * (h + gap);
      layout[key] = { domain: [top - h, top], title: { text: labels[i] || '', font: { size: 11 } },
        anchor: 'x', rangemode: 'tozero' };
    }
    layout.xaxis = { title: { text: 'time (s)' }, anchor: 'y' + (rows > 1 ? rows : '') };
    return layout;
  }

  function drawTopology(r) {
    const W = 1000;
    const H = 600;
    const pad = 50;
    const svgEl = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, class: 'topology' });
    const pos = {};
    for (const n of r.nodes) pos[n.id] = [pad + n.x * (W - 2 * pad), pad + (1 - n.y) * (H - 2 * pad)];
    const gLinks = svg('g', {});
    const gLabels = svg('g', {});
    const gNodes = svg('g', {});
    svgEl.append(gLinks, gLabels, gNodes);
    const lines = [];
    const labelled = new Set();
    const showLabels = r.links.length <= 80;
    r.links.forEach((l, j) => {
      const [x1, y1] = pos[l.src];
      const [x2, y2] = pos[l.dst];
      const len = Math.hypot(x2 - x1, y2 - y1) || 1;
      // The two directions side by side: offset to the right of the direction of travel.
      const ox = (-(y2 - y1) / len) * 3.5;
      const oy = ((x2 - x1) / len) * 3.5;
      const line = svg('line', { x1: x1 + ox, y1: y1 + oy, x2: x2 + ox, y2: y2 + oy,
        class: 'link', stroke: '#9e9e9e', 'stroke-width': 2, 'data-link': l.name, 'data-index': j });
      const title = svg('title', {});
      title.textContent = l.name + ': ' + fmtRate(l.rate_bps) + ', ' + fmtTime(l.delay_s) + ', ' + l.algorithm;
      line.append(title);
      gLinks.append(line);
      lines.push(line);
      const key = [l.src, l.dst].sort().join('|');
      if (showLabels && !labelled.has(key)) {
        labelled.add(key);
        const t = svg('text', { x: (x1 + x2) / 2 + ox * 3, y: (y1 + y2) / 2 + oy * 3 - 2,
          class: 'linklabel', 'text-anchor': 'middle' });
        t.textContent = fmtRate(l.rate_bps) + ', ' + fmtTime(l.delay_s);
        gLabels.append(t);
      }
    });
    const showNames = r.nodes.length <= 120;
    for (const n of r.nodes) {
      const [x, y] = pos[n.id];
      const g = svg('g', { class: 'node ' + n.kind, 'data-node': n.id });
      if (n.kind === 'router') {
        g.append(svg('rect', { x: x - 8, y: y - 8, width: 16, height: 16, rx: 2 }));
      } else {
        g.append(svg('circle', { cx: x, cy: y, r: n.kind === 'group' ? 11 : 6 }));
      }
      const title = svg('title', {});
      title.textContent = n.label + ' (' + n.kind + ')';
      g.append(title);
      if (showNames || n.kind !== 'host') {
        const t = svg('text', { x: x, y: y - 13, 'text-anchor': 'middle' });
        t.textContent = n.label;
        g.append(t);
      }
      gNodes.append(g);
    }
    return { svgEl, lines };
  }

  function drawSessions(view, s) {
    const t = f32(s.t);
    const box = el('div', { class: 'sessions-plot' });
    view.append(el('h2', {}, 'sessions: error metrics over time (seed 004)'), box);
    const traces = [];
    for (const [k, label, axis] of [['es_mean', 'E_s mean (%)', 'y'], ['es_p10', 'E_s p10', 'y'],
      ['es_p90', 'E_s p90', 'y'], ['ee_mean', 'E_e mean (%)', 'y2'], ['present', 'sessions present', 'y3']]) {
      if (s.series[k]) traces.push({ x: t, y: f32(s.series[k]), name: label, mode: 'lines', yaxis: axis });
    }
    Plotly.newPlot(box, traces, stackedLayout(3, ['E_s (%)', 'E_e (%)', 'sessions']), PLOT_CONFIG);
    if (s.error_quantiles) {
      const q = s.error_quantiles;
      view.append(tableEl({ name: 'session errors', columns: ['quantile', 'E_s (%)'],
        rows: q.q, total: q.q.length }, null),
      el('p', { class: 'hint' }, 'E_s of the ' + q.n + ' sessions rated at the last sample, as quantiles.'));
    }
  }

  // -- a sweep ----------------------------------------------------------------------------
  function SweepView(container, d) {
    const params = d.params.map((p) => p.column);
    const mk = (cls, opts, none) => {
      const s = el('select', { class: cls });
      if (none) s.append(el('option', { value: '' }, '(none)'));
      for (const [v, label] of opts) s.append(el('option', { value: v }, label));
      return s;
    };
    const metric = mk('sweep-metric', d.metrics.map((m, i) => [i, m.key]), false);
    const x = mk('sweep-x', params.map((p) => [p, p]), false);
    const hue = mk('sweep-hue', params.map((p) => [p, p]), true);
    const facet = mk('sweep-facet', params.map((p) => [p, p]), true);
    if (params.length > 1) hue.value = params[1];
    container.append(el('div', { class: 'pickers' },
      el('label', {}, 'metric ', metric), el('label', {}, 'x ', x),
      el('label', {}, 'hue ', hue), el('label', {}, 'facet ', facet)));
    const plot = el('div', { class: 'sweep-plot' });
    const tableBox = el('div', { class: 'sweep-table' });
    container.append(plot, el('p', { class: 'hint' }, 'Means over seeds (and over the parameters ' +
      'not picked) with 95 % intervals: mean ± t(0.975, n-1) · sd / √n, as xcc plot-sweep.'), tableBox);
    const t975 = (df) => (df < 1 ? NaN : df <= d.t975.length ? d.t975[df - 1] : 1.96);
    const pval = (r, p) => r.params[p];
    const sortKey = (r, p) => (r.params[p + '_si'] != null ? r.params[p + '_si'] : r.params[p]);

    function stats() {
      const m = d.metrics[+metric.value];
      const keys = [facet.value, hue.value, x.value];
      const groups = new Map();
      for (const r of d.runs) {
        const v = r.values[m.key];
        if (v == null) continue;
        const k = JSON.stringify(keys.map((p) => (p ? pval(r, p) : null)));
        if (!groups.has(k)) groups.set(k, { key: keys.map((p) => (p ? pval(r, p) : null)),
          sort: keys.map((p) => (p ? sortKey(r, p) : null)), vals: [] });
        groups.get(k).vals.push(v);
      }
      const out = [];
      for (const g of groups.values()) {
        const n = g.vals.length;
        const mean = g.vals.reduce((a, b) => a + b, 0) / n;
        const sd = n > 1 ? Math.sqrt(g.vals.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : NaN;
        out.push({ facet: g.key[0], hue: g.key[1], x: g.key[2], sort: g.sort, n, mean, sd,
          ci95: n > 1 ? (t975(n - 1) * sd) / Math.sqrt(n) : NaN });
      }
      const cmp = (a, b) => (a == null ? -1 : b == null ? 1 : a < b ? -1 : a > b ? 1 : 0);
      out.sort((a, b) => cmp(a.sort[0], b.sort[0]) || cmp(a.sort[1], b.sort[1]) || cmp(a.sort[2], b.sort[2]));
      return { m, rows: out };
    }
    function draw() {
      const { m, rows } = stats();
      const facets = [...new Set(rows.map((r) => r.facet))];
      const hues = [...new Set(rows.map((r) => r.hue))];
      const numeric = rows.every((r) => typeof r.sort[2] === 'number');
      const traces = [];
      const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b',
        '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
      // The x values as written ("20ms"), placed at their SI value when they have one.
      const ticks = new Map();
      for (const r of rows) ticks.set(r.sort[2], String(r.x));
      const tickvals = [...ticks.keys()];
      const inLegend = new Set();
      facets.forEach((f, fi) => {
        hues.forEach((h, hi) => {
          const sub = rows.filter((r) => r.facet === f && r.hue === h);
          if (!sub.length) return;
          const colour = palette[hi % palette.length];
          traces.push({
            x: sub.map((r) => (numeric ? r.sort[2] : String(r.x))),
            y: sub.map((r) => r.mean * m.scale),
            error_y: { type: 'data', array: sub.map((r) => (isNaN(r.ci95) ? 0 : r.ci95 * m.scale)),
              visible: true, color: colour },
            // A categorical x (a protocol) is points with error bars, not a line with a band.
            mode: numeric ? 'lines+markers' : 'markers',
            marker: { color: colour, size: 8 }, line: { color: colour },
            name: hue.value ? hue.value + '=' + h : m.key,
            legendgroup: String(h), showlegend: !inLegend.has(h) && inLegend.add(h) !== null,
            xaxis: fi === 0 ? 'x' : 'x' + (fi + 1), yaxis: fi === 0 ? 'y' : 'y' + (fi + 1),
            text: sub.map((r) => String(r.x)), customdata: sub.map((r) => r.n),
            hovertemplate: '%{text}: %{y:.4g} (n=%{customdata})',
          });
        });
      });
      const layout = { height: 420, margin: { l: 70, r: 10, t: 50, b: 60 },
        title: { text: m.label + ' · ' + m.title, font: { size: 13 } },
        legend: { orientation: 'h', y: -0.2 },
        grid: { rows: 1, columns: facets.length, pattern: 'independent' }, annotations: [] };
      facets.forEach((f, fi) => {
        const sx = fi === 0 ? '' : fi + 1;
        layout['xaxis' + sx] = numeric
          ? { title: { text: x.value }, type: 'linear', tickvals, ticktext: tickvals.map((v) => ticks.get(v)) }
          : { title: { text: x.value }, type: 'category' };
        layout['yaxis' + sx] = { title: { text: fi === 0 ? m.label : '' } };
        if (facet.value) {
          layout.annotations.push({ text: facet.value + '=' + f, showarrow: false,
            xref: 'x' + sx + ' domain', yref: 'y' + sx + ' domain', x: 0.5, y: 1.08 });
        }
      });
      plot.replaceChildren();
      plot.removeAttribute('data-drawn');
      Plotly.newPlot(plot, traces, layout, PLOT_CONFIG)
        .then(() => plot.setAttribute('data-drawn', m.key + '|' + x.value + '|' + facet.value));
      tableBox.replaceChildren(tableEl({ name: 'sweep-stats',
        columns: ['facet', 'hue', 'x', 'n', 'mean', 'sd', 'ci95'],
        rows: rows.map((r) => [r.facet, r.hue, r.x, r.n, r.mean, isNaN(r.sd) ? null : r.sd,
          isNaN(r.ci95) ? null : r.ci95]), total: rows.length }, null));
    }
    for (const s of [metric, x, hue, facet]) s.addEventListener('change', draw);
    draw();
  }

  // -- the reproduction index -----------------------------------------------------------------
  function IndexView(container, d) {
    for (const r of d.reports) {
      const box = el('section', { class: 'report', 'data-report': r.id });
      const cls = r.verdict.split(' ')[0];
      box.append(el('h2', {}, r.id + ' ', el('span', { class: 'verdict ' + cls }, r.verdict)));
      box.append(tableEl(r.claims, null));
      if (r.runs.length) {
        const note = r.runs_total > r.runs.length ? ' (' + r.runs.length + ' of ' + r.runs_total + ')' : '';
        const pick = el('select', { class: 'run-pick' }, ...r.runs.map((x, i) => el('option', { value: i }, x.label)));
        const holder = el('div', {});
        box.append(el('p', {}, 'runs' + note + ': ', pick), holder);
        const show = () => { holder.replaceChildren(); RunView(holder, [r.runs[+pick.value]]); };
        pick.addEventListener('change', show);
        show();
      } else {
        box.append(el('p', { class: 'hint' }, 'no run with time series in this report'));
      }
      container.append(box);
    }
  }

  try {
    if (D.kind === 'run' || D.kind === 'compare') {
      const rv = RunView(app, D.runs);
      if (D.kind === 'compare') {
        for (const t of D.tables) app.append(el('h2', {}, t.name), tableEl(t, null));
      }
      window.xccView = rv;
    } else if (D.kind === 'sweep') {
      SweepView(app, D);
    } else if (D.kind === 'index') {
      IndexView(app, D);
    }
  } finally {
    window.xccReady = true;
  }
})();

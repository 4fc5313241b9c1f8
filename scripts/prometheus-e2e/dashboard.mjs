#!/usr/bin/env node
// Draws the Grafana dashboard deploy/grafana/tokex-campaign.json as a page
// of SVG panels, laid out as its gridPos say, each from its own PromQL
// queries run against a real Prometheus (query_range). Grafana itself is
// not installable here (no registry ships it): this is the dashboard's
// content — its queries, verbatim but for the two Grafana variables
// ($campaign, $__rate_interval), their answers and its legends — not
// Grafana's rendering of it. Used by dashboard-screenshot.sh.
//   node dashboard.mjs PROMETHEUS_URL DASHBOARD.json CAMPAIGN_ID FROM_UNIX TO_UNIX RATE_INTERVAL > page.html
import { readFileSync } from 'node:fs';

const [prom, file, campaign, from, to, rateInterval] = process.argv.slice(2);
if (!rateInterval) {
  console.error('usage: dashboard.mjs PROMETHEUS_URL DASHBOARD.json CAMPAIGN_ID FROM_UNIX TO_UNIX RATE_INTERVAL');
  process.exit(2);
}
const dash = JSON.parse(readFileSync(file, 'utf8'));
const colors = ['#73bf69', '#f2cc0c', '#8ab8ff', '#ff780a', '#f2495c', '#5794f2', '#b877d9', '#ff9830', '#96d98d', '#ca95e5'];
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const reEscape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\\\$&');

function expand(expr) {
  return expr.replaceAll('$__rate_interval', rateInterval).replaceAll('$campaign', reEscape(campaign));
}

async function queryRange(expr) {
  const u = new URL(prom.replace(/\/$/, '') + '/api/v1/query_range');
  u.search = new URLSearchParams({ query: expr, start: from, end: to, step: '1' }).toString();
  const r = await fetch(u);
  const body = await r.json();
  if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
  return body.data.result;
}

function legend(format, metric) {
  return (format || '{{__name__}}').replace(/\{\{\s*(\w+)\s*\}\}/g, (_, l) => metric[l] ?? '');
}

function niceStep(raw) {
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

function fmt(v) {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6) return (v / 1e6).toFixed(1) + 'M';
  if (a >= 1e3) return (v / 1e3).toFixed(a >= 1e4 ? 0 : 1) + 'k';
  if (a >= 10) return v.toFixed(0);
  if (a >= 1) return v.toFixed(1);
  return v.toPrecision(2);
}

// panel draws one panel: its series as lines over the campaign's time.
function panel(p, series, w, h) {
  const pad = { l: 46, r: 10, t: 26, b: 20 };
  const pw = w - pad.l - pad.r, ph = h - pad.t - pad.b - 16 * Math.min(3, Math.ceil(series.length / 3));
  const t0 = Number(from), t1 = Number(to);
  let unit = p.fieldConfig?.defaults?.unit || '', scale = 1;
  let ymax = 0;
  for (const s of series) for (const [, v] of s.values) if (Number.isFinite(Number(v))) ymax = Math.max(ymax, Number(v));
  if (unit === 's' && ymax < 1) { unit = 'ms'; scale = 1000; }
  if (unit === 'bytes') { unit = 'MiB'; scale = 1 / 2 ** 20; }
  ymax *= scale;
  const step = niceStep((ymax || 1) / 4), top = Math.max(step, Math.ceil(ymax / step) * step);
  const x = (t) => pad.l + ((t - t0) / (t1 - t0)) * pw, y = (v) => pad.t + ph - (v / top) * ph;
  let s = `<svg width="${w}" height="${h}" viewBox="0 0 ${w} ${h}"><rect width="${w}" height="${h}" rx="3" fill="#181b1f" stroke="#2c3235"/>`;
  s += `<text x="10" y="17" class="title">${esc(p.title)}</text>`;
  for (let v = 0; v <= top + 1e-9; v += step) {
    s += `<line x1="${pad.l}" x2="${pad.l + pw}" y1="${y(v)}" y2="${y(v)}" class="grid"/><text x="${pad.l - 4}" y="${y(v) + 3}" class="ax" text-anchor="end">${fmt(v)}</text>`;
  }
  const tstep = niceStep((t1 - t0) / Math.max(2, Math.floor(pw / 110)));
  for (let t = Math.ceil(t0 / tstep) * tstep; t <= t1; t += tstep) {
    const d = new Date(t * 1000);
    const lbl = `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}:${String(d.getUTCSeconds()).padStart(2, '0')}`;
    s += `<text x="${x(t)}" y="${pad.t + ph + 13}" class="ax" text-anchor="middle">${lbl}</text>`;
  }
  s += `<text x="${pad.l - 4}" y="${pad.t - 5}" class="ax" text-anchor="end">${esc(unit === 'reqps' ? '/s' : unit === 'short' ? '' : unit)}</text>`;
  series.forEach((sr, i) => {
    let d = '', last = -Infinity;
    for (const [t, v] of sr.values) {
      const tn = Number(t), vn = Number(v);
      if (!Number.isFinite(vn)) continue; // NaN: no observation in the range (histogram_quantile)
      d += `${tn - last > 1.5 ? 'M' : 'L'}${x(tn).toFixed(1)},${y(vn * scale).toFixed(1)}`;
      last = tn;
    }
    s += `<path d="${d}" fill="none" stroke="${colors[i % colors.length]}" stroke-width="1.3"/>`;
    const pts = sr.values.filter(([, v]) => Number.isFinite(Number(v)));
    if (pts.length === 1) { // a lone sample draws no line
      s += `<circle cx="${x(Number(pts[0][0]))}" cy="${y(Number(pts[0][1]) * scale)}" r="2.5" fill="${colors[i % colors.length]}"/>`;
    }
  });
  series.slice(0, 9).forEach((sr, i) => {
    const lx = pad.l + (i % 3) * (pw / 3), ly = pad.t + ph + 28 + Math.floor(i / 3) * 14;
    s += `<rect x="${lx}" y="${ly - 7}" width="10" height="3" fill="${colors[i % colors.length]}"/><text x="${lx + 14}" y="${ly - 2}" class="lg">${esc(sr.name.slice(0, 40))}</text>`;
  });
  if (series.length > 9) s += `<text x="${w - 10}" y="${h - 4}" class="lg" text-anchor="end">+${series.length - 9} more</text>`;
  if (series.length === 0) s += `<text x="${w / 2}" y="${h / 2}" class="lg" text-anchor="middle">no data</text>`;
  return s + '</svg>';
}

const cell = 1400 / 24, row = 34;
let html = `<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:#111217;font:12px sans-serif;color:#ccccdc;width:1400px}
.head{padding:8px 12px 4px;font-size:13px}.head b{font-size:16px;color:#fff}
.grid{stroke:#2c3235;stroke-width:1}.ax{fill:#8e8e8e;font-size:10px}.title{fill:#d8d9da;font-size:13px;font-weight:500}.lg{fill:#ccccdc;font-size:11px}
.p{position:absolute}</style>
<div class="head"><b>${esc(dash.title)}</b> · campaign ${esc(campaign)} · each panel's PromQL queries from deploy/grafana/tokex-campaign.json run against a real Prometheus (query_range, 1 s step; $__rate_interval = ${esc(rateInterval)}) — drawn by scripts/prometheus-e2e/dashboard.mjs, not by Grafana</div><div style="position:relative">`;
let bottom = 0;
for (const p of dash.panels) {
  const series = [];
  for (const t of p.targets) {
    for (const r of await queryRange(expand(t.expr))) series.push({ name: legend(t.legendFormat, r.metric), values: r.values });
  }
  const g = p.gridPos, w = g.w * cell - 6, h = g.h * row - 6;
  html += `<div class="p" style="left:${g.x * cell + 3}px;top:${g.y * row + 3}px">${panel(p, series, w, h)}</div>`;
  bottom = Math.max(bottom, (g.y + g.h) * row);
}
html += `</div><div style="height:${bottom + 10}px"></div>`;
process.stdout.write(html);

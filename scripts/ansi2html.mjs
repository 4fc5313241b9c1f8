// ansi2html: a terminal screen captured with `tmux capture-pane -e -p`
// (text with SGR escapes: bold, dim, italic, underline, reverse, 16, 256
// and 24-bit colours) on stdin, as one self-contained HTML page of the same
// cells on stdout, for a headless browser to screenshot.
//   node scripts/ansi2html.mjs < screen.ansi > screen.html
import { readFileSync } from "node:fs";

const FG = "#d4d4d4", BG = "#1b1b1f";
const base16 = ["#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
  "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff"];

function color256(n) {
  if (n < 16) return base16[n];
  if (n < 232) {
    const v = [0, 95, 135, 175, 215, 255], i = n - 16;
    return rgb(v[Math.floor(i / 36)], v[Math.floor(i / 6) % 6], v[i % 6]);
  }
  const g = 8 + (n - 232) * 10;
  return rgb(g, g, g);
}
const rgb = (r, g, b) => `rgb(${r},${g},${b})`;
// Every character outside ASCII gets a cell of its own, one character wide,
// so that glyphs from fallback fonts (braille, ✓, ⚠) keep the grid.
const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
  .replace(/[^\x00-\x7f]/gu, (c) => `<i>${c}</i>`);

function apply(st, codes) {
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i];
    if (c === 0) Object.assign(st, { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, reverse: false });
    else if (c === 1) st.bold = true;
    else if (c === 2) st.dim = true;
    else if (c === 3) st.italic = true;
    else if (c === 4) st.underline = true;
    else if (c === 7) st.reverse = true;
    else if (c === 22) st.bold = st.dim = false;
    else if (c === 23) st.italic = false;
    else if (c === 24) st.underline = false;
    else if (c === 27) st.reverse = false;
    else if (c >= 30 && c <= 37) st.fg = base16[c - 30];
    else if (c >= 90 && c <= 97) st.fg = base16[c - 90 + 8];
    else if (c >= 40 && c <= 47) st.bg = base16[c - 40];
    else if (c >= 100 && c <= 107) st.bg = base16[c - 100 + 8];
    else if (c === 39) st.fg = null;
    else if (c === 49) st.bg = null;
    else if (c === 38 || c === 48) {
      let v = null;
      if (codes[i + 1] === 5) { v = color256(codes[i + 2]); i += 2; }
      else if (codes[i + 1] === 2) { v = rgb(codes[i + 2], codes[i + 3], codes[i + 4]); i += 4; }
      if (c === 38) st.fg = v; else st.bg = v;
    }
  }
}

function style(st) {
  let fg = st.fg || FG, bg = st.bg;
  if (st.reverse) [fg, bg] = [bg || BG, fg];
  const css = [`color:${fg}`];
  if (bg) css.push(`background:${bg}`);
  if (st.bold) css.push("font-weight:bold");
  if (st.dim) css.push("opacity:.6");
  if (st.italic) css.push("font-style:italic");
  if (st.underline) css.push("text-decoration:underline");
  return css.join(";");
}

const input = readFileSync(0, "utf8");
const st = { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false, reverse: false };
let out = "", run = "", runStyle = style(st);
const flush = () => { if (run) out += `<span style="${runStyle}">${esc(run)}</span>`; run = ""; };
for (const part of input.split(/(\x1b\[[0-9;]*m)/)) {
  const m = /^\x1b\[([0-9;]*)m$/.exec(part);
  if (!m) { run += part.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ""); continue; }
  flush();
  apply(st, m[1] === "" ? [0] : m[1].split(";").map(Number));
  runStyle = style(st);
}
flush();
process.stdout.write(`<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:${BG}}
pre{margin:0;padding:12px 14px;font:13px/1.22 "DejaVu Sans Mono","Liberation Mono",monospace;color:${FG};background:${BG};display:inline-block}
i{font-style:inherit;display:inline-block;width:1ch;overflow:visible;text-align:center}
</style><pre>${out.replace(/\n+$/, "")}</pre>
`);

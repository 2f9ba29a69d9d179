"""Stylesheet of the HTML report (system fonts only: no web fonts, nothing fetched)."""

STYLE = r"""
:root { --fg:#1d1f23; --muted:#5d6470; --line:#d9dde3; --bg:#fff; --panel:#f6f7f9; --accent:#2f5fb3;
        --bar:#6b8fd6; --hl:#fff3bf; --sel:#dbe7ff; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg);
       background:var(--bg); }
header.top { padding:14px 24px 8px; border-bottom:1px solid var(--line); background:var(--panel); }
header.top h1 { margin:0 0 4px; font-size:19px; font-weight:600; overflow-wrap:anywhere; }
header.top .meta { margin:0; color:var(--muted); font-size:12.5px; overflow-wrap:anywhere; }
nav.toc { margin-top:6px; display:flex; flex-wrap:wrap; gap:4px 14px; font-size:13px; }
nav.toc a { color:var(--accent); text-decoration:none; }
main { padding:8px 24px 40px; max-width:1500px; }
section.part { margin:22px 0 0; }
section.part > h2 { font-size:16px; margin:0 0 8px; padding-bottom:3px; border-bottom:1px solid var(--line); }
section.part > h2 .sub { font-weight:400; color:var(--muted); font-size:13px; }
h3 { font-size:14px; margin:14px 0 6px; }
.note { color:var(--muted); font-size:13px; }
.warn { background:#fff7e0; border:1px solid #f1d48a; padding:6px 10px; border-radius:4px; font-size:13px; }
code, .mono, .isa, .isa-text { font-family: ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace; font-size:12.5px; }
table { border-collapse:collapse; }
th, td { padding:2px 8px; text-align:left; vertical-align:top; }
th { font-weight:600; font-size:12.5px; color:var(--muted); border-bottom:1px solid var(--line); white-space:nowrap; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
table.grid tbody tr:nth-child(even) { background:#fafbfc; }
dl.kv { display:grid; grid-template-columns:max-content 1fr; gap:3px 16px; margin:0; }
dl.kv dt { color:var(--muted); }
dl.kv dd { margin:0; overflow-wrap:anywhere; }
.cards { display:flex; flex-wrap:wrap; gap:16px; }
.card { flex:1 1 420px; background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:10px 14px; }
.card h3 { margin-top:0; }
.sw { display:inline-block; width:10px; height:10px; border:1px solid rgba(0,0,0,.35); vertical-align:-1px; margin-right:5px; }
.hbar { position:relative; height:14px; background:#eceef2; border-radius:2px; min-width:160px; }
.hbar > span { position:absolute; left:0; top:0; bottom:0; border-right:1px solid rgba(0,0,0,.35); }
.stack { display:flex; height:16px; border:1px solid var(--line); border-radius:2px; overflow:hidden; min-width:200px; }
.stack > span { display:block; height:100%; }
.legend { display:flex; flex-wrap:wrap; gap:4px 14px; font-size:12.5px; margin-top:4px; }
table.cats td.barcol { width:45%; }
figure.roofline { margin:0; max-width:860px; } figure.roofline svg { width:100%; height:auto; display:block; }
figure.roofline figcaption { font-size:13px; } ul.ceilings { margin:0; padding-left:18px; }
ul.findings { margin:0; padding-left:18px; }
ul.findings li { margin:4px 0; }
.sev { display:inline-block; font-size:11px; padding:0 6px; border-radius:8px; color:#fff; background:#777; margin-right:6px; text-transform:uppercase; }
.sev.high { background:#c0392b; } .sev.medium { background:#d68910; } .sev.low { background:#2e86c1; } .sev.info { background:#7f8c8d; }
ol.plan { margin:0; padding-left:22px; } ol.plan li { margin:6px 0; }
.hint { color:var(--muted); font-size:13px; }
table.src tr.src-row { cursor:pointer; }
table.src tr.src-row:hover, table.src tr.src-row:focus { background:var(--sel); outline:none; }
table.src tr.src-row td.loc::before { content:"\25B8  "; color:var(--muted); }
table.src tr.src-row.open td.loc::before { content:"\25BE  "; }
tr.src-detail > td { background:#f3f6fb; padding:6px 10px 8px 26px; }
tr.src-detail table td { padding:1px 8px; }
td.loc { overflow-wrap:anywhere; max-width:520px; }
.wide { max-width:100%; overflow-x:auto; }
pre.snippet { margin:4px 0 8px; padding:4px 8px; background:#f6f8fa; border:1px solid var(--line); overflow-x:auto; }
pre.snippet .hot { background:#fff3b0; font-weight:600; }
details.sources { margin:4px 0 8px; }
tr:target { background:var(--hl) !important; }
.isa-tools { display:flex; gap:16px; align-items:center; margin:0 0 6px; font-size:13px; }
.isa-scroll { max-height:78vh; overflow:auto; border:1px solid var(--line); border-radius:4px; }
.isa-inner { position:relative; }
svg.arrows { position:absolute; left:0; top:0; width:40px; pointer-events:none; overflow:visible; }
.isa { min-width:1180px; font-size:12.5px; }
.isa-head, .isa-row { display:grid; height:22px; align-items:center;
  grid-template-columns:40px 52px minmax(300px,3fr) 96px 84px 92px 92px 76px minmax(130px,1.2fr) minmax(120px,1fr); }
.isa-head { position:sticky; top:0; z-index:2; background:var(--panel); border-bottom:1px solid var(--line);
  font-weight:600; color:var(--muted); }
.isa-head > span, .isa-row > span { padding:0 6px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
.isa-head > span:first-child, .isa-row > span:first-child { padding:0; }
.isa-head .num, .isa-row .num { text-align:right; font-variant-numeric:tabular-nums; }
/* Blocks of rows the browser skips while off-screen: thousands of rows stay cheap. */
.isa-block { content-visibility:auto; contain-intrinsic-size:auto var(--block-h, 4400px); }
.isa-row > .isa-text { border-left:6px solid #ccc; white-space:pre; height:100%; line-height:22px; }
.isa-row:hover { background:#f0f3f8; }
.isa-row.cold { color:#9aa0a8; }
.isa-row.selected { background:var(--sel) !important; }
.isa-row.linked { background:var(--hl) !important; }
.isa-row:target { background:var(--hl); }
.isa.hide-cold .isa-row.cold { display:none; }
.isa-row[data-wait] { cursor:pointer; }
.bar-cell { height:100%; line-height:22px;
  background:linear-gradient(90deg, var(--c, var(--bar)) var(--w, 0%), transparent var(--w, 0%)) no-repeat;
  background-size:100% 60%; background-position:0 50%; }
.bar-cell.hit { --c:#9fb8e8; } .bar-cell.lat { --c:#b9a3e3; } .bar-cell.stall { --c:#f08c84; } .bar-cell.idle { --c:#b8bcc4; }
.isa-row .waits a { margin-right:8px; color:var(--accent); text-decoration:none; }
.isa-row .src { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace; }
td.waits a, td.prods a { margin-right:8px; color:var(--accent); text-decoration:none; white-space:nowrap; }
td.waits a:hover { text-decoration:underline; }
a { color:var(--accent); }
svg.timeline { width:100%; height:auto; display:block; font:11px system-ui,sans-serif; }
svg.timeline text { fill:#333; }
footer { padding:14px 24px; color:var(--muted); font-size:12px; border-top:1px solid var(--line); }
@media print { .isa-scroll { max-height:none; overflow:visible; } }
"""

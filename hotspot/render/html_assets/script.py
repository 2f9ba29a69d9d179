"""Script of the HTML report.

Everything interactive hangs off one delegated listener per dispatch section (no per-row listeners).
The ISA table, the only part that can reach thousands of rows, is built from the embedded JSON blob
with DOM APIs (textContent only, so nothing from the trace is ever parsed as HTML), in chunks so the
page stays responsive while it fills. When done the section gets `data-isa-rendered` (row count)
and `data-isa-render-ms`, which the browser test reads.
"""

SCRIPT = r"""
(function () {
  "use strict";
  var CHUNK_ROWS = 250;      // rows per block: built in one task, skipped by layout while off-screen
  var ROW_PX = 22;           // .isa-row height in the stylesheet (placeholder size of unrendered blocks)
  var SVGNS = "http://www.w3.org/2000/svg";

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function fmt(n) {
    if (n === null || n === undefined) return "";
    return Number(n).toLocaleString("en-US", {maximumFractionDigits: 1});
  }
  function pct(x) { return (100 * x).toFixed(x >= 0.1 ? 0 : 1) + "%"; }
  function baseName(label) {
    var i = label.lastIndexOf("/");
    return i >= 0 ? label.slice(i + 1) : label;
  }

  function Dispatch(sec) {
    this.sec = sec;
    var blob = sec.querySelector("script.hotspot-data");
    this.d = blob ? JSON.parse(blob.textContent) : {};
    this.p = sec.id;
    this.byLine = {};
    this.waitsOf = {};      // producer line -> [wait line, ...]
    var waits = this.d.waits || {};
    for (var w in waits) {
      if (!Object.prototype.hasOwnProperty.call(waits, w)) continue;
      var prods = waits[w];
      for (var k = 0; k < prods.length; k++) {
        var pl = String(prods[k][0]);
        (this.waitsOf[pl] = this.waitsOf[pl] || []).push(w);
      }
    }
    var self = this;
    sec.addEventListener("click", function (ev) { self.onClick(ev); });
    sec.addEventListener("keydown", function (ev) {
      if ((ev.key === "Enter" || ev.key === " ") && ev.target.classList &&
          ev.target.classList.contains("src-row")) {
        ev.preventDefault();
        self.toggleSource(ev.target);
      }
    });
    var cold = sec.querySelector("input.hide-cold");
    if (cold) cold.addEventListener("change", function () {
      var t = sec.querySelector(".isa");
      if (t) t.classList.toggle("hide-cold", cold.checked);
      self.clearLinks();
    });
    this.renderIsa();
  }

  Dispatch.prototype.onClick = function (ev) {
    var t = ev.target;
    var srcRow = t.closest ? t.closest("tr.src-row") : null;
    if (srcRow && !t.closest("a")) { this.toggleSource(srcRow); return; }
    var isaRow = t.closest ? t.closest(".isa-row") : null;
    if (isaRow && !t.closest("a")) { this.select(isaRow); }
  };

  Dispatch.prototype.toggleSource = function (row) {
    var detail = row.nextElementSibling;
    if (!detail || !detail.classList.contains("src-detail")) return;
    var open = detail.hasAttribute("hidden");
    if (open) detail.removeAttribute("hidden"); else detail.setAttribute("hidden", "");
    row.classList.toggle("open", open);
    row.setAttribute("aria-expanded", open ? "true" : "false");
  };

  Dispatch.prototype.renderIsa = function () {
    var self = this, d = this.d, sec = this.sec;
    var body = sec.querySelector(".isa-body");
    if (!body || !d.rows) { sec.setAttribute("data-isa-rendered", "0"); return; }
    var rows = d.rows, mx = d.max || [0, 0, 0, 0], colors = d.colors || {};
    var waits = d.waits || {}, src = d.src || {}, p = this.p;
    for (var j = 0; j < rows.length; j++) this.byLine[String(rows[j][0])] = rows[j];
    var BAR = ["hit", "lat", "stall", "idle"];
    function row(r) {
      var ln = r[0], tr = el("div", r[3] ? "isa-row" : "isa-row cold");
      tr.id = p + "-isa-" + ln;
      tr.setAttribute("role", "row");
      tr.appendChild(el("span", "gut"));
      tr.appendChild(el("span", "num", String(ln)));
      var isa = el("span", "isa-text", r[1]);
      isa.title = r[1];
      isa.style.borderLeftColor = colors[r[2]] || "#ccc";
      tr.appendChild(isa);
      tr.appendChild(el("span", "cat", r[2]));
      for (var b = 0; b < 4; b++) {
        var v = r[3 + b], td = el("span", "num bar-cell " + BAR[b], v ? fmt(v) : "");
        if (v && mx[b] > 0) td.style.setProperty("--w", (100 * v / mx[b]).toFixed(1) + "%");
        tr.appendChild(td);
      }
      var wt = el("span", "waits"), prods = waits[String(ln)];
      if (prods) {
        tr.setAttribute("data-wait", String(ln));
        for (var k = 0; k < prods.length; k++) {
          var pr = prods[k], a = el("a", "prod", "\u2190 #" + pr[0] + " " + pct(pr[1]));
          a.href = "#" + p + "-isa-" + pr[0];
          var prow = self.byLine[String(pr[0])];
          a.title = (prow ? prow[1] + " \u2014 " : "") + fmt(pr[2]) + " stall cycles blamed";
          wt.appendChild(a);
        }
      }
      tr.appendChild(wt);
      var st = el("span", "src");
      if (r[7]) {
        var idx = src[r[7]];
        var a2 = el(idx === undefined ? "span" : "a", null, baseName(r[7]));
        if (idx !== undefined) a2.href = "#" + p + "-src-" + idx;
        st.title = r[7];
        st.appendChild(a2);
      }
      tr.appendChild(st);
      return tr;
    }
    var i = 0, t0 = performance.now();
    function chunk() {
      var frag = document.createDocumentFragment();
      var end = Math.min(rows.length, i + CHUNK_ROWS);
      var block = el("div", "isa-block");
      block.style.setProperty("--block-h", (ROW_PX * (end - i)) + "px");
      for (; i < end; i++) block.appendChild(row(rows[i]));
      frag.appendChild(block);
      body.appendChild(frag);
      if (i < rows.length) { setTimeout(chunk, 0); return; }
      sec.setAttribute("data-isa-render-ms", (performance.now() - t0).toFixed(0));
      sec.setAttribute("data-isa-rendered", String(rows.length));
      var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
      if (target && sec.contains(target)) target.scrollIntoView();
    }
    chunk();
  };

  Dispatch.prototype.clearLinks = function () {
    var old = this.sec.querySelectorAll(".isa-row.selected, .isa-row.linked");
    for (var i = 0; i < old.length; i++) old[i].classList.remove("selected", "linked");
    var svg = this.sec.querySelector("svg.arrows");
    if (svg) while (svg.lastChild && svg.lastChild.nodeName !== "defs") svg.removeChild(svg.lastChild);
  };

  // Select an ISA row: a wait shows arrows from its producers; a producer, arrows to its waits.
  Dispatch.prototype.select = function (tr) {
    var wasSelected = tr.classList.contains("selected");
    this.clearLinks();
    if (wasSelected) return;
    tr.classList.add("selected");
    var ln = tr.id.slice((this.p + "-isa-").length);
    var waits = this.d.waits || {}, pairs = [];
    if (waits[ln]) {
      for (var k = 0; k < waits[ln].length; k++) pairs.push([String(waits[ln][k][0]), ln, waits[ln][k][1]]);
    }
    var mine = this.waitsOf[ln] || [];
    for (var m = 0; m < mine.length; m++) {
      var list = waits[mine[m]];
      for (var q = 0; q < list.length; q++) if (String(list[q][0]) === ln) pairs.push([ln, mine[m], list[q][1]]);
    }
    this.drawArrows(pairs);
    this.sec.setAttribute("data-arrows", String(this.sec.querySelectorAll("svg.arrows path.link").length));
  };

  Dispatch.prototype.drawArrows = function (pairs) {
    var svg = this.sec.querySelector("svg.arrows"), inner = this.sec.querySelector(".isa-inner");
    if (!svg || !inner) return;
    var top = inner.getBoundingClientRect().top;
    svg.setAttribute("height", String(inner.scrollHeight));
    svg.style.height = inner.scrollHeight + "px";
    for (var i = 0; i < pairs.length; i++) {
      var from = document.getElementById(this.p + "-isa-" + pairs[i][0]);
      var to = document.getElementById(this.p + "-isa-" + pairs[i][1]);
      if (!from || !to) continue;
      from.classList.add("linked");
      to.classList.add("linked");
      var a = from.getBoundingClientRect(), b = to.getBoundingClientRect();
      if (!a.height || !b.height) continue;   // filtered out of view
      var y1 = a.top - top + a.height / 2, y2 = b.top - top + b.height / 2;
      var bend = 36 - Math.min(32, 6 + Math.abs(y2 - y1) / 25);
      var path = document.createElementNS(SVGNS, "path");
      path.setAttribute("class", "link");
      path.setAttribute("d", "M38 " + y1 + " C" + bend + " " + y1 + " " + bend + " " + y2 + " 38 " + y2);
      path.setAttribute("fill", "none");
      path.setAttribute("stroke", "#c0392b");
      path.setAttribute("stroke-width", String(1 + 3 * Math.min(1, pairs[i][2] || 0)));
      path.setAttribute("marker-end", "url(#" + this.p + "-arrowhead)");
      svg.appendChild(path);
    }
  };

  function init() {
    var secs = document.querySelectorAll("section.dispatch");
    for (var i = 0; i < secs.length; i++) new Dispatch(secs[i]);
    document.body.setAttribute("data-ready", "1");
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
"""

// heapscope HTML report: shared helpers. Every figure shown comes from the JSON the page
// carries (built by heapscope's analyses); these functions only lay it out.
"use strict";
const HS = { sections: {}, data: null };

HS.num = (n) => (n === null || n === undefined) ? "-" : Number(n).toLocaleString("en-US");
// "1 thread", "2 threads": a count with its noun agreeing, as the text reports say it
HS.counted = (n, noun, plural) => `${HS.num(n)} ${n === 1 ? noun : (plural || noun + "s")}`;

HS.bytes = (n) => {
  if (n === null || n === undefined) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = Number(n), i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i === 0 ? String(v) : v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)) + " " + units[i];
};

HS.percent = (share) => (share > 0 && share < 0.0005) ? "<0.1%" : (100 * share).toFixed(1) + "%";

HS.seconds = (s) => s === null || s === undefined ? "-" :
  (s < 1 ? (1000 * s).toFixed(1) + " ms" : s.toFixed(s < 10 ? 2 : 1) + " s");

// el("div", {class: "x", onclick: f}, child, "text", ...)
HS.el = (tag, attrs, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
};

// A section (or part) the profiles hold nothing for says so, and why.
HS.absent = (why) => HS.el("p", { class: "hs-absent" }, why);

HS.note = (text) => HS.el("p", { class: "hs-note" }, text);

// A table whose columns sort on a click of their header. columns: [{title, key(row) ->
// sort value, cell(row) -> node or text, num: right-aligned}]; rows: data objects.
// limit: rows drawn at first (a "show all" button draws the rest); sort: [column index,
// descending] the table opens sorted by; more: a line under the table for rows the page
// does not carry (a bounded page: "N more sizes ... in the JSON export").
HS.table = (columns, rows, opts) => {
  opts = opts || {};
  let order = rows.slice(), sortCol = null, desc = false, limit = opts.limit || 0;
  const table = HS.el("table", { class: "hs-table" + (opts.cls ? " " + opts.cls : "") });
  const thead = HS.el("thead"), tbody = HS.el("tbody"), foot = HS.el("div", { class: "hs-more" });
  const headRow = HS.el("tr");
  const sortBy = (i, descending) => {
    const c = columns[i];
    desc = descending;
    sortCol = i;
    order = rows.slice().sort((a, b) => {
      const x = c.key(a), y = c.key(b);
      return (x < y ? -1 : x > y ? 1 : 0) * (desc ? -1 : 1);
    });
    headRow.querySelectorAll("th").forEach((h, j) =>
      h.setAttribute("aria-sort", j === i ? (desc ? "descending" : "ascending") : "none"));
  };
  columns.forEach((c, i) => {
    const th = HS.el("th", { class: c.num ? "num" : null, title: "sort by " + c.title,
      onclick: () => { sortBy(i, sortCol === i ? !desc : !!c.num); draw(); } }, c.title);
    headRow.append(th);
  });
  thead.append(headRow);
  table.append(thead, tbody);
  function draw() {
    tbody.textContent = "";
    const shown = limit ? order.slice(0, limit) : order;
    for (const r of shown) {
      const tr = HS.el("tr", opts.rowAttrs ? opts.rowAttrs(r) : null);
      for (const c of columns) tr.append(HS.el("td", { class: c.num ? "num" : null }, c.cell(r)));
      tbody.append(tr);
    }
    foot.textContent = "";
    if (limit && order.length > limit) {
      foot.append(`${HS.num(limit)} of ${HS.num(order.length)} rows shown `,
        HS.el("button", { onclick: () => { limit = 0; draw(); } }, "show all"));
    }
    if (opts.more) foot.append(HS.el("p", { class: "hs-note hs-folded" }, opts.more));
  }
  if (opts.sort) sortBy(opts.sort[0], opts.sort[1]);
  draw();
  return HS.el("div", { class: "hs-table-wrap" }, table, foot);
};

// A labelled <select>; onchange(value).
HS.select = (label, options, onchange, value) => {
  const s = HS.el("select", { onchange: () => onchange(s.value) },
    options.map(([v, text]) => HS.el("option", { value: v, selected: v === value }, text)));
  return HS.el("label", { class: "hs-control" }, label + " ", s);
};

HS.button = (text, onclick, attrs) => HS.el("button", Object.assign({ onclick }, attrs || {}), text);

// Colour of a heat-map cell: white at 0, dark orange at the table's largest count (log scale).
HS.heat = (n, max) => {
  if (!n) return null;
  const t = Math.log1p(n) / Math.log1p(max || 1);
  const light = Math.round(96 - 52 * t);
  return `background: hsl(28, 95%, ${light}%)` + (light < 62 ? "; color: white" : "");
};

HS.process = (d) => (d.rank != null ? `rank ${d.rank} pid ${d.pid}` : `pid ${d.pid}`) +
  (d.host ? ` on ${d.host}` : "");

HS.go = (id) => { const e = document.getElementById(id); if (e) e.scrollIntoView(); };

// A call path in a table cell: one line, cut at the cell's width, whole on hover.
HS.pathCell = (text) => HS.el("span", { class: "hs-path", title: text }, text);

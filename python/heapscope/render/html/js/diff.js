// Section 6: A (before) and B (after) compared: totals, per size and region, migrations,
// stack trace types new/gone/changed, and a differential flame graph (red: more in B,
// blue: fewer).
"use strict";
HS.signed = (n) => (n > 0 ? "+" : "") + HS.num(n);

HS.diffTree = function (stacks, names, side) {
  const root = { name: "all compared stacks", value: 0, delta: 0, a: 0, b: 0, children: [] };
  const index = new Map([[root, new Map()]]);
  for (const s of stacks) {
    const v = side === "a" ? s.count_a : s.count_b;
    const visit = (n) => { n.value += v; n.delta += s.delta; n.a += s.count_a; n.b += s.count_b; };
    visit(root);
    let node = root;
    for (let i = s.frames.length - 1; i >= 0; i--) {
      const name = names[s.frames[i]], kids = index.get(node);
      let c = kids.get(name);
      if (!c) {
        c = { name, value: 0, delta: 0, a: 0, b: 0, children: [] };
        kids.set(name, c); index.set(c, new Map()); node.children.push(c);
      }
      visit(c);
      node = c;
    }
  }
  return root;
};

HS.sections.diff = function (body, d) {
  const el = HS.el, t = d.total;
  const pct = (c) => c.percent === null ? "new" : (c.percent > 0 ? "+" : "") + c.percent.toFixed(2) + "%";
  body.append(el("p", { id: "hs-diff-total" }, `A: ${d.a.join(" ")} (${d.processes[0]} processes), ` +
    `B: ${d.b.join(" ")} (${d.processes[1]}). Allocations ${HS.num(t.count_a)} → ${HS.num(t.count_b)} ` +
    `(${HS.signed(t.delta)}, ${pct(t)}); bytes ${HS.num(t.bytes_a)} → ${HS.num(t.bytes_b)} ` +
    `(${HS.signed(t.bytes_delta)}).`));
  // several runs per side: means, each side's lowest..highest run, and the status
  // "within run-to-run variation" where the ranges meet
  const several = d.runs.a > 1 || d.runs.b > 1;
  const runCell = (r, s) => HS.num(r["count_" + s]) +
    (r["runs_" + s] ? ` (${HS.num(r["count_" + s + "_min"])}..${HS.num(r["count_" + s + "_max"])})` : "");
  if (several) body.append(el("p", { id: "hs-diff-runs" }, `Runs: A ${d.runs.a}, B ${d.runs.b}: ` +
    `before and after are their means with each side's lowest..highest run; allocations per run ` +
    `A ${runCell(t, "a")}, B ${runCell(t, "b")}: ${t.status}.`));
  body.append(el("h3", {}, "Per size and region, biggest change first"));
  const changed = d.sizes.filter((r) => r.delta);
  if (!d.sizes.length) body.append(HS.absent("No allocation in A or in B: nothing to compare."));
  else if (!changed.length) body.append(HS.absent("No change: every size in every region has the same count in A and B."));
  else body.append(HS.table([
    { title: "region", key: (r) => r.region, cell: (r) => r.region },
    { title: "size", num: true, key: (r) => r.size, cell: (r) => HS.num(r.size) },
    { title: "before", num: true, key: (r) => r.count_a, cell: (r) => runCell(r, "a") },
    { title: "after", num: true, key: (r) => r.count_b, cell: (r) => runCell(r, "b") },
    { title: "delta", num: true, key: (r) => r.delta, cell: (r) => HS.signed(r.delta) },
    { title: "ratio", num: true, key: (r) => r.ratio === null ? Infinity : r.ratio,
      cell: (r) => r.ratio === null ? "new" : r.ratio.toFixed(3) },
    { title: "bytes delta", num: true, key: (r) => r.bytes_delta, cell: (r) => HS.signed(r.bytes_delta) },
    { title: "status", key: (r) => r.status, cell: (r) => r.status }],
  changed, { limit: 50, cls: "hs-diff-sizes" }));
  if (d.rows > d.sizes.length) body.append(HS.note(`The ${HS.num(d.sizes.length)} biggest of ${HS.num(d.rows)} rows are in the page (heapscope diff --top 0 lists all).`));

  body.append(el("h3", {}, "Migrations (in one region, some sizes fell while others rose)"));
  if (!d.migrations.length) body.append(HS.absent("No migration."));
  else body.append(el("ul", { class: "hs-migrations" }, d.migrations.map((m) => el("li", {},
    `${m.region}: fell ${m.fell.slice(0, 5).map((r) => `${r.size} B (${HS.signed(r.delta)})`).join(", ")}; ` +
    `rose ${m.rose.slice(0, 5).map((r) => `${r.size} B (${HS.signed(r.delta)})`).join(", ")}`))));

  body.append(el("h3", {}, "Stack trace types"));
  if (!d.stacks) { body.append(HS.absent("Neither recording holds stack trace types (record with --sizes).")); return; }
  const path = (s) => s.frames.slice(0, 6).map((i) => d.names[i]).join(" ← ") + (s.frames.length > 6 ? " ← …" : "");
  const kinds = [["new", "appeared in B"], ["gone", "disappeared from B"], ["more", "more in B"], ["fewer", "fewer in B"],
    ["within run-to-run variation", "changed within run-to-run variation"]];
  for (const [status, title] of kinds) {
    const rows = d.stacks.filter((s) => s.status === status);
    if (!rows.length) continue;
    body.append(el("h4", {}, `${rows.length} ${title}`), HS.table([
      { title: "size", num: true, key: (s) => s.size, cell: (s) => HS.num(s.size) },
      { title: "region", key: (s) => s.region, cell: (s) => s.region },
      { title: "before", num: true, key: (s) => s.count_a, cell: (s) => runCell(s, "a") },
      { title: "after", num: true, key: (s) => s.count_b, cell: (s) => runCell(s, "b") },
      { title: "delta", num: true, key: (s) => s.delta, cell: (s) => HS.signed(s.delta) },
      { title: "call path (innermost first)", key: (s) => s.delta, cell: (s) => HS.pathCell(path(s)) }],
    rows, { limit: 10, cls: "hs-diff-stacks", rowAttrs: () => ({ "data-status": status }) }));
  }
  for (const w of d.warnings) body.append(HS.note(w));
  for (const m of d.path_migrations) {
    body.append(HS.note(`path changed size in ${m.region}: ${m.before.map(([s, c]) => `${s} B ×${HS.num(c)}`).join(", ")} → ` +
      `${m.after.map(([s, c]) => `${s} B ×${HS.num(c)}`).join(", ")}: ${path(m)}`));
  }
  body.append(el("h3", {}, "Differential flame graph"), el("p", {}, "Widths are B's allocations " +
    "(or A's); red frames allocate more in B, blue fewer, the deeper the colour the larger the change."));
  let side = "b";
  const flame = el("div", { id: "hs-diff-flame", class: "hs-flame" });
  const tip = flamegraph.tooltip.defaultFlamegraphTooltip().html((n) =>
    `<b>${HS.escape(n.data.name)}</b><br>before ${HS.num(n.data.a)}, after ${HS.num(n.data.b)} (${HS.signed(n.data.delta)})`);
  const chart = flamegraph.default().width(Math.max(600, body.clientWidth - 8)).cellHeight(18)
    .transitionDuration(250).minFrameSize(2).tooltip(tip)
    .setColorMapper(flamegraph.colorMapper.differentialColorMapper);
  const draw = () => { flame.textContent = ""; d3.select(flame).datum(HS.diffTree(d.stacks, d.names, side)).call(chart); };
  body.append(el("div", { class: "hs-controls" }, HS.select("width by", [["b", "B (after)"], ["a", "A (before)"]],
    (v) => { side = v; draw(); }, side), HS.button("reset zoom", () => chart.resetZoom())), flame);
  draw();
};

// Section 3: stack trace types per size and region: a flame graph (d3-flame-graph: click
// to zoom, search, hover for counts and bytes, icicle toggle), the stack types listed, and
// the call graph with its ranked fix targets (graphviz SVG made when the page was written).
"use strict";

// The flame graph's tree from stack types (frames innermost first, as indices into the
// frame table): every node carries allocations and bytes through it (inclusive) and, per
// size, the allocations of that size through it. The groups' identical call paths are
// one path: a function is one box whatever sizes and regions pass through it.
HS.flameTree = function (rootName, groups, frames, value) {
  const root = { name: rootName, value: 0, count: 0, bytes: 0, sizes: {}, children: [] };
  const child = (node, name, frame) => {
    node.index = node.index || new Map();
    let c = node.index.get(name);
    if (!c) {
      c = { name, value: 0, count: 0, bytes: 0, sizes: {}, children: [], frame };
      node.index.set(name, c);
      node.children.push(c);
    }
    return c;
  };
  const add = (node, t, size) => { node.count += t.count; node.bytes += t.bytes;
    node.value += value === "bytes" ? t.bytes : t.count;
    node.sizes[size] = (node.sizes[size] || 0) + t.count; };
  for (const g of groups) {
    for (const t of g.stack_types) {
      add(root, t, g.size);
      let node = root;
      for (let i = t.frames.length - 1; i >= 0; i--) {
        node = child(node, frames[t.frames[i]].name, t.frames[i]);
        add(node, t, g.size);
      }
    }
    if (g.more) {   // the types a bounded page does not carry: one box, so widths stay true
      const rest = { count: g.more.count, bytes: g.more.bytes };
      add(root, rest, g.size);
      add(child(root, HS.NOT_CARRIED, null), rest, g.size);
    }
  }
  const strip = (n) => { delete n.index; n.children.forEach(strip); };
  strip(root);
  return root;
};

HS.NOT_CARRIED = "(stack trace types not carried in the page)";

// The size most of a node's allocations have.
HS.mainSize = (node) => Object.entries(node.sizes).reduce((best, [s, n]) =>
  best === null || n > best[1] ? [Number(s), n] : best, null)[0];

// Colours of the sizes with the most allocations (every other size is grey).
HS.SIZE_COLOURS = ["#e8590c", "#1c7ed6", "#2f9e44", "#ae3ec9", "#f59f00", "#0c8599", "#c2255c", "#5c940d"];
HS.OTHER_SIZE = "#adb5bd";

HS.sections.stacks = function (body, d) {
  const el = HS.el;
  const label = (g) => `${g.size} B in ${g.region}: ${HS.num(g.count)} allocations, ` +
    `${g.types} stack trace type${g.types !== 1 ? "s" : ""}`;
  // the groups by allocations; the page opens on the busiest, its call graph drawn
  const byCount = d.groups.map((g, i) => i).sort((a, b) => d.groups[b].count - d.groups[a].count || a - b);
  let current = String(byCount[0]), value = "count", inverted = false;
  const options = (d.groups.length > 1 ? [["all", `every size and region, paths merged (${d.groups.length} groups)`]] : [])
    .concat(byCount.map((i) => [String(i), label(d.groups[i])]));
  // in the merged view a box is coloured by the size most of its allocations have
  const sizeTotals = {};
  for (const g of d.groups) sizeTotals[g.size] = (sizeTotals[g.size] || 0) + g.count;
  const topSizes = Object.keys(sizeTotals).map(Number).sort((a, b) => sizeTotals[b] - sizeTotals[a] || a - b)
    .slice(0, HS.SIZE_COLOURS.length);
  const sizeColour = (size) => { const i = topSizes.indexOf(size); return i < 0 ? HS.OTHER_SIZE : HS.SIZE_COLOURS[i]; };
  const legend = el("div", { class: "hs-size-legend", id: "hs-size-legend" });
  const search = el("input", { type: "search", placeholder: "search a function", id: "hs-flame-search",
    oninput: () => search.value ? chart.search(search.value) : chart.clear() });
  const details = el("div", { class: "hs-flame-details" });
  const flame = el("div", { id: "hs-flame", class: "hs-flame" });
  const chosen = () => current === "all" ? d.groups : [d.groups[Number(current)]];
  const rootName = () => current === "all" ? "all recorded stacks" : label(d.groups[Number(current)]);
  const tip = flamegraph.tooltip.defaultFlamegraphTooltip().html((n) => {
    const x = n.data, total = chart_root().data.count || 1;
    const f = x.frame !== null && x.frame !== undefined ? d.frames[x.frame] : null;
    const where = f && f.file ? `<br>${HS.escape(f.file)}:${f.line}` : "";
    const sizes = Object.entries(x.sizes).sort((a, b) => b[1] - a[1]);
    const bySize = current === "all" && sizes.length > 1 ? "<br>" + sizes.slice(0, 5)
      .map(([s, n]) => `${HS.num(Number(s))} B: ${HS.num(n)}`).join(", ") +
      (sizes.length > 5 ? `, ${sizes.length - 5} more sizes` : "") : "";
    return `<b>${HS.escape(x.name)}</b>${where}<br>${HS.num(x.count)} allocations ` +
      `(${HS.percent(x.count / total)}), ${HS.num(x.bytes)} bytes${bySize}`;
  });
  const width = () => Math.max(600, body.clientWidth - 8);
  const chart = flamegraph.default().width(width()).cellHeight(18).transitionDuration(250)
    .minFrameSize(2).tooltip(tip).setDetailsElement(details)
    .setSearchMatch((n, term) => !!term && n.data.name.toLowerCase().includes(term.toLowerCase()))
    .setColorMapper((n, original) => current !== "all" || n.highlight ? original : sizeColour(HS.mainSize(n.data)));
  let selection = null;
  const chart_root = () => selection.datum();
  const draw = () => {
    flame.textContent = "";
    const tree = HS.flameTree(rootName(), chosen(), d.frames, value);
    selection = d3.select(flame).datum(tree);
    chart.inverted(inverted).width(width());
    selection.call(chart);
    if (search.value) chart.search(search.value);
    legend.textContent = "";
    if (current === "all") legend.append(el("span", {}, "colour: the size most of a box's allocations have — ",
      topSizes.map((s) => el("span", { class: "hs-swatch-item", "data-size": s },
        el("span", { class: "hs-swatch", style: `background: ${sizeColour(s)}` }), `${HS.num(s)} B`)),
      topSizes.length < Object.keys(sizeTotals).length ? el("span", { class: "hs-swatch-item" },
        el("span", { class: "hs-swatch", style: `background: ${HS.OTHER_SIZE}` }), "other sizes") : null));
    list();
    graph();
  };
  const controls = el("div", { class: "hs-controls" },
    HS.select("stacks of", options, (v) => { current = v; draw(); }, current),
    HS.select("width by", [["count", "allocations"], ["bytes", "bytes"]], (v) => { value = v; draw(); }, value),
    search,
    HS.button("icicle / flame", () => { inverted = !inverted; draw(); }, { id: "hs-flame-invert" }),
    HS.button("reset zoom", () => chart.resetZoom()));
  const typesBox = el("div", { class: "hs-types" });
  const graphBox = el("div", { class: "hs-callgraph", id: "hs-callgraph" });
  const list = () => {
    typesBox.textContent = "";
    if (current === "all") return;
    const g = d.groups[Number(current)];
    typesBox.append(el("h3", {}, `Stack trace types of ${g.size} B in ${g.region}`), HS.table([
      { title: "#", num: true, key: (t) => t.rank, cell: (t) => t.rank },
      { title: "allocations", num: true, key: (t) => t.count, cell: (t) => t.estimated
        ? `~${HS.num(t.count)} (${HS.num(t.count_low)}–${HS.num(t.count_high)})` : HS.num(t.count) },
      { title: "share", num: true, key: (t) => t.share, cell: (t) => HS.percent(t.share) },
      { title: "bytes", num: true, key: (t) => t.bytes, cell: (t) => HS.num(t.bytes) },
      { title: "call path (innermost first)", key: (t) => t.rank,
        cell: (t) => HS.pathCell(t.frames.slice(0, 6).map((i) => d.frames[i].short || d.frames[i].name)
          .join(" ← ") + (t.frames.length > 6 ? ` ← … (${t.frames.length - 6} more)` : "")) }],
      g.stack_types, { limit: 50, cls: "hs-stack-types", more: g.more ?
        `${HS.counted(g.more.types, "more stack trace type")} (${HS.num(g.more.count)} allocations, ` +
        `${HS.num(g.more.bytes)} bytes) not carried in the page: \`heapscope stacks ` +
        `${d.inputs.join(" ")} --size ${g.size} --region '${g.region}' --top 0 --format json\` lists every one.` : null }));
  };
  const graph = () => {
    graphBox.textContent = "";
    if (current === "all") {
      graphBox.append(HS.note(`The flame graph merges the same call path of every size and region. ` +
        `Call graphs are drawn for the ${d.callgraphs.length} size and region ` +
        `group${d.callgraphs.length !== 1 ? "s" : ""} with the most allocations: choose one above.`));
      return;
    }
    const g = d.groups[Number(current)];
    const cg = d.callgraphs.find((c) => c.size === g.size && c.region === g.region);
    graphBox.append(el("h3", {}, `Call graph of ${g.size} B in ${g.region}`));
    if (!cg) {
      graphBox.append(HS.absent(`Not drawn: the page draws the call graphs of the ` +
        `${d.callgraphs.length} groups with the most allocations (heapscope callgraph draws any).`));
      return;
    }
    graphBox.append(el("p", {}, `${HS.num(cg.vertices)} functions, ${HS.num(cg.edges)} call edges. ` +
      `Fix targets (user code, by the allocations a fix there removes: those beyond the first of ` +
      `each call path) are orange, the first darkest.`));
    for (const p of cg.patterns || []) {   // a runtime allocating per call of user code
      const sites = p.call_sites.slice(0, 5).map((s) => `${s.function} (${HS.num(s.count)})`).join(", ");
      graphBox.append(HS.note(`${p.family} (${p.library}) allocates per call of ${p.entry}: ` +
        `${HS.num(p.count)} allocations (${HS.percent(p.share)}), called from ${sites}.`));
    }
    if ((cg.wrappers || []).length) {   // seen through like the allocator, never ranked
      graphBox.append(HS.note("Wrappers (user code passing each call to one allocation), seen " +
        "through like the allocator: " + cg.wrappers.slice(0, 5).map((w) =>
          `${w.function} (${HS.num(w.count)} allocations from ${HS.num(w.call_sites)} call sites)`).join(", ") +
        (cg.wrappers.length > 5 ? `, and ${cg.wrappers.length - 5} more` : "") + "."));
    }
    if (cg.ranking.length) {
      graphBox.append(HS.table([
        { title: "rank", num: true, key: (v) => v.rank, cell: (v) => v.rank },
        { title: "types", num: true, key: (v) => v.types, cell: (v) => HS.num(v.types) },
        { title: "allocations", num: true, key: (v) => v.count, cell: (v) => HS.num(v.count) },
        { title: "repeats", num: true, key: (v) => v.repeats, cell: (v) => HS.num(v.repeats) },
        { title: "share", num: true, key: (v) => v.count, cell: (v) => HS.percent(cg.count ? v.count / cg.count : 0) },
        { title: "bytes", num: true, key: (v) => v.bytes, cell: (v) => HS.num(v.bytes) },
        { title: "function", key: (v) => v.function,
          cell: (v) => HS.pathCell(v.function + (v.file ? ` @ ${v.file}` : "")) }], cg.ranking, { cls: "hs-ranking" }));
    } else {
      graphBox.append(HS.note("No user-code vertex to rank: every frame is an entry point or runtime code."));
    }
    if (cg.svg) {
      // fitted to the page's width at first (the whole graph in view), 1:1 on a click
      const holder = el("div", { class: "hs-svg hs-fit", title: "click: actual size / fit to width",
        onclick: () => holder.classList.toggle("hs-fit") });
      holder.innerHTML = cg.svg;
      if (cg.note) graphBox.append(HS.note(cg.note));   // drawn in part: what is left out
      graphBox.append(holder);
    } else {
      graphBox.append(HS.absent(`The call graph is not drawn: ${cg.note}`));
    }
  };
  body.append(el("p", {}, "Each box is a function; its width is the allocations (or bytes) " +
    "made through it; callers below callees (flame) or above (icicle). Click to zoom, hover for figures."),
    controls, legend, details, flame, typesBox, graphBox);
  if (d.folded && d.folded.groups) body.append(HS.note(`${HS.counted(d.folded.groups, "more size and region group")} ` +
    `with fewer allocations (${HS.num(d.folded.count)} allocations together) not carried in the page: ` +
    `\`heapscope stacks ${d.inputs.join(" ")} --size all --format json\` lists them.`));
  if (d.sampling) body.append(HS.note(`Stacks were sampled, one a mean ${HS.num(d.sampling.mean_bytes)} ` +
    `bytes apart: a type's allocations are estimates (~, with a 95% interval); each size's total is exact.`));
  for (const n of d.not_recorded) body.append(HS.note(n.message));
  HS.showStacks = (size) => {
    const i = d.groups.findIndex((g) => g.size === size);
    if (i < 0) return;
    current = String(i);
    controls.querySelector("select").value = current;
    draw();
    HS.go("stacks");
  };
  draw();
};

HS.escape = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

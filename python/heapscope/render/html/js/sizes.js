// Section 2: the size x region table of `heapscope report` (sortable; cells coloured as a
// heat map), size groups and hot sizes per region. A size with recorded stacks links to
// its flame graph.
"use strict";
HS.sections.sizes = function (body, d) {
  const el = HS.el;
  if (!d.regions.length) { body.append(HS.absent("No allocation was recorded.")); return; }
  const withStacks = new Set(d.with_stacks);
  let max = 0;
  for (const row of d.sizes) for (const r of d.regions) max = Math.max(max, row.counts[r] || 0);
  let heat = true;
  const sizeCell = (row) => withStacks.has(row.size)
    ? el("a", { href: "#stacks", class: "hs-size-link", "data-size": row.size,
        onclick: (ev) => { ev.preventDefault(); HS.showStacks && HS.showStacks(row.size); } },
        HS.num(row.size))
    : HS.num(row.size);
  const columns = [{ title: "size (B)", num: true, key: (x) => x.size, cell: sizeCell }]
    .concat(d.regions.map((r) => ({
      title: r, num: true, key: (x) => x.counts[r] || 0,
      cell: (x) => { const n = x.counts[r] || 0;
        return el("span", { class: "hs-heat", "data-region": r, "data-count": n,
          style: heat ? HS.heat(n, max) : null }, n ? HS.num(n) : ""); } })))
    .concat([
      { title: "total", num: true, key: (x) => x.total_count, cell: (x) => HS.num(x.total_count) },
      { title: "bytes", num: true, key: (x) => x.total_bytes, cell: (x) => HS.num(x.total_bytes) }]);
  const holder = el("div", { id: "hs-size-table" });
  const draw = () => { holder.textContent = "";
    holder.append(HS.table(columns, d.sizes, { limit: 300, cls: "hs-sizes",
      sort: [columns.length - 2, true],            // by allocations, the most first
      more: d.folded.sizes ? `${HS.counted(d.folded.sizes, "more size")} with fewer allocations ` +
        `(${HS.num(d.folded.count)} together) not carried in the page: \`heapscope report ` +
        `${d.inputs.join(" ")} --top 0 --format json\` lists every size.` : null,
      rowAttrs: (x) => ({ "data-size": x.size }) })); };
  body.append(el("p", {}, `${HS.num(d.distinct_sizes)} sizes, the most allocated first; allocations ` +
      `per region, coloured by count (log scale). Click a column to sort by it` +
      (withStacks.size ? "; an underlined size opens its stack trace types." : "."),
    " ", HS.button("heat map on/off", () => { heat = !heat; draw(); })), holder);
  draw();

  const groups = ["small", "mid", "large"];
  body.append(el("h3", {}, "Size groups per region (small ≤ 256 KiB, mid ≤ 1 MiB, large > 1 MiB)"),
    HS.table([{ title: "region", key: (r) => r, cell: (r) => r }].concat(groups.flatMap((g) => [
      { title: g + " count", num: true, key: (r) => d.groups[r][g].count, cell: (r) => HS.num(d.groups[r][g].count) },
      { title: g + " bytes", num: true, key: (r) => d.groups[r][g].bytes, cell: (r) => HS.num(d.groups[r][g].bytes) }])),
    d.regions, { cls: "hs-groups" }));

  body.append(el("h3", {}, "Hot sizes per region (by count; share of the region's allocations)"));
  const hot = el("div", { class: "hs-hot" });
  for (const r of d.regions) {
    hot.append(el("div", { class: "hs-hot-region", "data-region": r }, el("h4", {}, r),
      HS.table([
        { title: "size", num: true, key: (h) => h.size, cell: (h) => sizeCell(h) },
        { title: "count", num: true, key: (h) => h.count, cell: (h) => HS.num(h.count) },
        { title: "share", num: true, key: (h) => h.share, cell: (h) => HS.percent(h.share) },
        { title: "bytes", num: true, key: (h) => h.bytes, cell: (h) => HS.num(h.bytes) }],
      d.hot_sizes[r])));
  }
  body.append(hot);
};

// Section 4: lifetime histograms per size, temporaries, who held the heap at its peak, and
// the blocks never freed (the documents of heapscope lifetimes, temporaries, peak, leaks).
"use strict";
HS.path = (frames, n) => frames.slice(0, n || 5).map((f) => f.function || "??").join(" ← ") +
  (frames.length > (n || 5) ? " ← …" : "");

// The columns the temporaries, peak and leak tables share (rows of the tracking documents).
const COL = {
  rank: { title: "#", num: true, key: (r) => r.rank, cell: (r) => r.rank },
  size: { title: "size", num: true, key: (r) => r.size, cell: (r) => HS.num(r.size) },
  region: { title: "region", key: (r) => r.region, cell: (r) => r.region },
  // "~": a path's figure estimated from sampled stacks (record --track's default)
  blocks: { title: "blocks", num: true, key: (r) => r.blocks, cell: (r) => (r.estimated ? "~" : "") + HS.num(r.blocks) },
  bytes: { title: "bytes", num: true, key: (r) => r.bytes, cell: (r) => (r.estimated ? "~" : "") + HS.num(r.bytes) },
  path: { title: "call path", key: (r) => r.rank,
          cell: (r) => r.recorded ? HS.pathCell(HS.path(r.frames)) :
            (r.no_stack || "").startsWith("start-up") ? "(no stack: allocated at start-up)" :
            r.no_stack === "not-sampled" ? "(not on a sampled path)" : "(stack not recorded)" },
};

// uPlot bars of a log2 histogram: bins_json rows {bin, lo, hi, count}.
HS.histogram = function (title, summary, unit) {
  const bins = summary.bins;
  const holder = HS.el("div", { class: "hs-chart", "data-title": title });
  if (!bins.length) { holder.append(HS.note(`${title}: no block was freed.`)); return holder; }
  const last = bins[bins.length - 1].bin, xs = [], ys = [];
  for (let b = bins[0].bin; b <= last; b++) { xs.push(b); ys.push(0); }
  for (const r of bins) ys[r.bin - bins[0].bin] = r.count;
  const label = (b) => { const r = bins.find((x) => x.bin === b);
    const lo = r ? r.lo : (b === 0 ? 0 : 2 ** (b - 1));
    return unit === "ns" ? HS.seconds(lo / 1e9) : HS.num(lo); };
  requestAnimationFrame(() => {
    holder.uplot = new uPlot({
      title, width: 560, height: 220, scales: { x: { time: false } }, legend: { show: true },
      series: [{ label: unit === "ns" ? "lifetime from" : "allocations between, from",
        value: (u, v) => v === null ? "-" : label(v) },
      { label: "blocks", fill: "rgba(28,126,214,0.5)", stroke: "#1c7ed6",
        paths: uPlot.paths.bars({ size: [0.8, 40] }), points: { show: false }, value: (u, v) => HS.num(v) }],
      axes: [{ values: (u, vals) => vals.map((v) => Number.isInteger(v) ? label(v) : ""), rotate: -30 },
        { values: (u, vals) => vals.map(HS.num), size: 60 }],
    }, [xs, ys], holder);
  });
  return holder;
};

HS.sections.tracking = function (body, d) {
  const el = HS.el, life = d.lifetimes, temps = d.temporaries, t = life.totals;
  const bound = temps.bound.max_ns ? ` and within ${HS.seconds(temps.bound.max_ns / 1e9)}` : "";
  body.append(el("p", {}, `${HS.num(t.allocs)} tracked allocations, ${HS.num(t.frees)} freed, ` +
    `${HS.num(t.live_at_end)} live at the end; ${HS.num(temps.totals.temporaries)} temporaries ` +
    `(${HS.percent(temps.totals.share)}: freed with at most ${temps.bound.max_between} other ` +
    `allocations of the thread in between${bound}).`));
  if (!life.sizes.length) { body.append(HS.absent("No tracked allocation.")); return; }

  body.append(el("h3", {}, "Lifetimes per size"));
  let which = String(life.sizes.reduce((best, s, i) => s.allocs > life.sizes[best].allocs ? i : best, 0));
  const hist = el("div", { class: "hs-hist", id: "hs-lifetimes" });
  const draw = () => {
    hist.textContent = "";
    const s = life.sizes[Number(which)];
    hist.append(el("p", {}, `${s.size} B: ${HS.num(s.allocs)} allocations, ${HS.num(s.frees)} ` +
      `freed, ${HS.num(s.temporaries)} temporaries, ${HS.num(s.live_at_end)} live at the end` +
      (s.extra ? `; the allocator gave ${HS.num(s.extra.bytes)} bytes more than asked over ` +
        `${HS.num(s.extra.blocks)} blocks` : "") + "."),
    el("div", { class: "hs-hot" }, HS.histogram(`${s.size} B: lifetime in time`, s.time, "ns"),
      HS.histogram(`${s.size} B: allocations in between`, s.between, "count")));
  };
  body.append(HS.select("size", life.sizes.map((s, i) => [String(i),
    `${s.size} B (${HS.num(s.allocs)} allocations)`]), (v) => { which = v; draw(); }, which), hist);
  if (life.folded && life.folded.sizes) body.append(HS.note(`${HS.counted(life.folded.sizes, "more size")} ` +
    `with fewer allocations (${HS.num(life.folded.allocs)} together) not carried in the page: ` +
    `\`heapscope lifetimes ${d.inputs.join(" ")} --format json\` has them.`));
  draw();

  body.append(el("h3", {}, "Temporaries"));
  if (!temps.sizes.length) body.append(HS.absent("No temporary: every block outlived the bound."));
  else body.append(HS.table([
    COL.size,
    { title: "temporaries", num: true, key: (r) => r.temporaries, cell: (r) => HS.num(r.temporaries) },
    { title: "of its allocations", num: true, key: (r) => r.share, cell: (r) => HS.percent(r.share) },
    { title: "of all temporaries", num: true, key: (r) => r.share_of_temporaries, cell: (r) => HS.percent(r.share_of_temporaries) },
    { title: "stack types", num: true, key: (r) => r.types, cell: (r) => HS.num(r.types) }],
  temps.sizes, { limit: 30, cls: "hs-temporaries" }), HS.table([
    COL.rank, COL.size, COL.region,
    { title: "temporaries", num: true, key: (r) => r.temporaries, cell: (r) => HS.num(r.temporaries) },
    { title: "share", num: true, key: (r) => r.share, cell: (r) => HS.percent(r.share) },
    COL.path],
  temps.stack_types, { limit: 20 }));

  body.append(el("h3", {}, "Who held the heap at its peak"));
  for (const p of d.peak.peaks) {
    body.append(el("p", {}, `Process ${p.process + 1}: peak ${p.peak_lower_bound ? "at least " : ""}${HS.bytes(p.peak_bytes)} ` +
      `(${HS.num(p.peak_bytes)} bytes requested) at ${HS.seconds(p.peak_mono_ns / 1e9)}; ` +
      `${HS.bytes(p.end_bytes)} at the end` +
      (p.unattributed_bytes ? `; ${HS.num(p.unattributed_bytes)} bytes held by blocks without a type` : "") + "."),
    HS.table([
      COL.rank, COL.size, COL.region, COL.blocks, COL.bytes,
      { title: "of the peak", num: true, key: (r) => r.share, cell: (r) => HS.percent(r.share) },
      COL.path],
    p.stack_types, { cls: "hs-peak-holders" }));
  }

  const lk = d.leaks, lt = lk.totals;
  body.append(el("h3", {}, "Leaks: blocks never freed"));
  if (!lt.blocks) { body.append(HS.absent("No leak: every tracked block was freed.")); return; }
  body.append(el("p", {}, `${HS.num(lt.reported_blocks)} blocks (${HS.num(lt.reported_bytes)} bytes) ` +
    `in ${HS.num(lt.reported_types)} stack trace types were still live at the end.`),
  HS.table([COL.rank, COL.size, COL.region, COL.blocks, COL.bytes, COL.path],
  lk.leaks, { cls: "hs-leaks" }));
};

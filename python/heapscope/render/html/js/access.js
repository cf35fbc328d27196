// Section 5: memory allocated and not used (record --access): the document of heapscope
// access, every call path with the bytes it never touched first, per region and per rank,
// and an MPI job's job file. "~": an estimate from the sampled blocks, (low..high) its 95%
// interval; a figure every block of which was measured is shown bare.
"use strict";
HS.estimate = (v, lo, hi, fmt) => {
  if (v === null || v === undefined) return "-";
  if (lo === v && hi === v) return fmt(v);
  return `~${fmt(v)} (${fmt(lo)}..${fmt(hi)})`;
};
HS.fig = (r, name, fmt) => HS.estimate(r[name], r[name + "_low"], r[name + "_high"], fmt || HS.num);
HS.accessPath = (frames) => frames.slice(0, 5).map((f) => f.function || "??").join(" ← ") +
  (frames.length > 5 ? " ← …" : "");
HS.touchTime = (ns) => ns === null ? "-" : ns < 1e3 ? `${ns} ns` : ns < 1e6 ? `${(ns / 1e3).toFixed(1)} µs` :
  HS.seconds(ns / 1e9);

HS.accessColumns = (paths) => [
  { title: "#", num: true, key: (r) => r.rank, cell: (r) => r.rank },
  { title: "never touched", num: true, key: (r) => r.untouched_bytes || 0,
    cell: (r) => HS.fig(r, "untouched_bytes", HS.bytes) },
  { title: "touched", num: true, key: (r) => r.touched_share || 0,
    cell: (r) => r.touched_share === null ? "-" : HS.el("span", { class: "hs-share",
      title: HS.fig(r, "touched_bytes", HS.bytes) },
      HS.el("span", { class: "hs-bar", style: `width:${Math.round(60 * r.touched_share)}px` }),
      " " + HS.percent(r.touched_share)) },
  { title: "blocks", num: true, key: (r) => r.blocks, cell: (r) => HS.fig(r, "blocks") },
  { title: "bytes", num: true, key: (r) => r.bytes, cell: (r) => HS.fig(r, "bytes", HS.bytes) },
  { title: "blocks never touched", num: true, key: (r) => r.never_touched_blocks || 0,
    cell: (r) => HS.fig(r, "never_touched_blocks") },
  { title: "read before written", num: true, key: (r) => r.read_before_written_blocks || 0,
    cell: (r) => HS.fig(r, "read_before_written_blocks") },
  { title: "first touch (median)", num: true, key: (r) => r.first_touch ? r.first_touch.median_ns_high : 0,
    cell: (r) => !r.first_touch || !r.first_touch.blocks ? "-" :
      `${HS.touchTime(r.first_touch.median_ns_low)}..${HS.touchTime(r.first_touch.median_ns_high)}` },
  { title: "samples", num: true, key: (r) => r.measured, cell: (r) => `${HS.num(r.measured)}/${HS.num(r.samples)}` },
  { title: "size", num: true, key: (r) => r.size, cell: (r) => HS.num(r.size) },
  { title: "region", key: (r) => r.region, cell: (r) => r.region },
].concat(paths ? [{ title: "call path", key: (r) => r.rank,
  cell: (r) => r.frames.length ? HS.pathCell(HS.accessPath(r.frames)) : "(no stack)" }] : []);

HS.sumLine = (t, what) => t === null ? "" :
  `${what}: ~${HS.bytes(t.bytes)} in ~${HS.num(t.blocks)} blocks; ~${HS.bytes(t.touched_bytes)} ` +
  `touched, ~${HS.bytes(t.untouched_bytes)} never touched; ~${HS.num(t.never_touched_blocks)} ` +
  `blocks never touched, ~${HS.num(t.read_before_written_blocks)} read before written ` +
  `(from ${HS.num(t.measured)} measured samples).`;

HS.sumTable = (rows, first) => HS.table([
  { title: first, key: (r) => r[first], cell: (r) => String(r[first]) },
  { title: "bytes", num: true, key: (r) => r.bytes, cell: (r) => "~" + HS.bytes(r.bytes) },
  { title: "touched", num: true, key: (r) => r.touched_bytes, cell: (r) => "~" + HS.bytes(r.touched_bytes) },
  { title: "never touched", num: true, key: (r) => r.untouched_bytes, cell: (r) => "~" + HS.bytes(r.untouched_bytes) },
  { title: "blocks never touched", num: true, key: (r) => r.never_touched_blocks, cell: (r) => "~" + HS.num(r.never_touched_blocks) },
  { title: "read before written", num: true, key: (r) => r.read_before_written_blocks, cell: (r) => "~" + HS.num(r.read_before_written_blocks) },
], rows, { limit: 30, cls: `hs-access-${first}` });

HS.sections.access = function (body, d) {
  const el = HS.el;
  if (d.entries.length || d.totals) {
    const m = d.mechanism;
    body.append(el("p", {}, `Pages read with ${m.pages}; one block a mean ${HS.num(m.sample_mean)} ` +
      `bytes of allocations apart is measured (from ${HS.bytes(m.large_bytes)} on where the ` +
      `allocator put it, smaller ones on pages of their own); first touches known to within ` +
      `${HS.touchTime(m.poll_ns)}. ~: estimates, with their 95% intervals.`));
    for (const n of d.notes) body.append(HS.note(n));
    body.append(el("p", {}, HS.sumLine(d.totals, "All call paths")));
    body.append(el("h3", {}, "Call paths, the bytes never touched first"));
    body.append(HS.table(HS.accessColumns(true), d.entries, { limit: 30, cls: "hs-access-paths" }));
    if (d.regions.length > 1) body.append(el("h3", {}, "Per region"), HS.sumTable(d.regions, "region"));
    if (d.per_rank.length) body.append(el("h3", {}, "Per rank (its file)"), HS.sumTable(d.per_rank, "rank"));
  }
  const j = d.job;
  if (j) {
    body.append(el("h3", {}, `The job file: ${HS.num(j.ranks_measured)} of ${HS.counted(j.ranks, "rank")} measured`));
    for (const n of j.notes) body.append(HS.note(n));
    if (j.totals) body.append(el("p", {}, HS.sumLine(j.totals, "All ranks")));
    if (j.entries.length) body.append(HS.table(HS.accessColumns(false), j.entries, { limit: 30, cls: "hs-access-job" }));
    body.append(el("h4", {}, "Per rank (its own estimates)"), HS.sumTable(j.per_rank, "rank"));
  }
};

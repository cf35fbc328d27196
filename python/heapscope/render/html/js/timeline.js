// Section 5: heap, RSS and PSS over time (uPlot: drag to zoom, double-click to reset),
// region spans as bands; for an MPI job the ranks' sum, each rank, the min/max envelope
// over the ranks, and the rank table.
"use strict";
HS.COLOURS = ["#d9480f", "#1c7ed6", "#2f9e44", "#ae3ec9", "#f08c00", "#0c8599", "#5c940d", "#e64980"];

// A uPlot chart of series [{label, values, colour, dash}] over xs (seconds); bands:
// [{name, begin_s, end_s, depth}] drawn behind the lines.
HS.lineChart = function (title, xs, series, bands, opts) {
  opts = opts || {};
  const holder = HS.el("div", { class: "hs-chart", "data-title": title });
  const spans = bands || [];
  const drawBands = (u) => {
    const ctx = u.ctx, top = u.bbox.top, height = u.bbox.height;
    ctx.save();
    spans.forEach((b, i) => {
      const end = b.end_s === null ? xs[xs.length - 1] : b.end_s;
      const x0 = u.valToPos(b.begin_s, "x", true), x1 = u.valToPos(end, "x", true);
      const left = Math.max(x0, u.bbox.left), right = Math.min(x1, u.bbox.left + u.bbox.width);
      if (right <= left) return;
      ctx.fillStyle = i % 2 ? "rgba(120,140,200,0.10)" : "rgba(120,200,140,0.12)";
      const inset = b.depth * 14 * devicePixelRatio;
      ctx.fillRect(left, top + inset, right - left, height - inset);
      ctx.fillStyle = "#555";
      ctx.font = `${11 * devicePixelRatio}px sans-serif`;
      if (right - left > 30 * devicePixelRatio) ctx.fillText(b.name || b.region, left + 3, top + inset + 12 * devicePixelRatio);
    });
    ctx.restore();
  };
  const make = () => {
    const width = Math.max(500, (holder.parentNode ? holder.parentNode.clientWidth : 900) - 10);
    return new uPlot({
      title, width, height: opts.height || 300, scales: { x: { time: false } },
      cursor: { drag: { x: true, y: false } },
      series: [{ label: "seconds", value: (u, v) => v === null ? "-" : v.toFixed(3) + " s" }].concat(series.map((s, i) => ({
        label: s.label, stroke: s.colour || HS.COLOURS[i % HS.COLOURS.length], width: s.width || 1.5,
        dash: s.dash, spanGaps: false, value: (u, v) => HS.bytes(v), show: s.show !== false }))),
      axes: [{ label: "seconds since the start", values: (u, vals) => {
        const inc = vals.length > 1 ? Math.abs(vals[1] - vals[0]) : 1;
        const dec = Math.min(9, Math.max(0, Math.ceil(-Math.log10(inc || 1))));
        return vals.map((v) => v.toFixed(dec)); } }, { values: (u, vals) => vals.map(HS.bytes), size: 80 }],
      hooks: { drawClear: [drawBands] },
    }, [xs].concat(series.map((s) => s.values)), holder);
  };
  // uPlot measures its box: make it once the holder is in the page
  requestAnimationFrame(() => { holder.uplot = make(); });
  return holder;
};

HS.sections.timeline = function (body, d) {
  const el = HS.el;
  if (d.job) HS.jobTimeline(body, d.job);
  if (!d.processes.length) return;
  if (d.job) body.append(el("h3", {}, "Each process's own samples"));
  let which = 0;
  const box = el("div", { id: "hs-process-timeline" });
  const draw = () => {
    box.textContent = "";
    const p = d.processes[which];
    const heap = p.heap_measure !== "none";
    const own = p.recorder_measured;
    const series = [
      { label: "heap in use", values: p.heap_bytes, colour: "#d9480f", show: heap },
      { label: "heap, MPI", values: p.heap_mpi_bytes, colour: "#ae3ec9",
        show: p.heap_mpi_bytes.some((v) => v) },
      { label: own ? "RSS, program" : "RSS", values: p.rss_bytes, colour: "#1c7ed6" },
      { label: own ? "PSS, program" : "PSS", values: p.pss_bytes, colour: "#2f9e44", dash: [5, 3] },
      { label: "recorder's own memory", values: p.recorder_bytes, colour: "#868e96", dash: [2, 3],
        show: own }];
    box.append(el("p", {}, `${HS.process(p)}: ${HS.num(p.sample_count)} samples over ` +
      `${HS.seconds(p.duration_s)} (every ${HS.seconds(p.interval_ns / 1e9)}; ` +
      (heap ? `heap in use counted in ${p.heap_measure} bytes)` : "heap in use not measured: RSS and PSS only)") + (p.reduced_to ? `; drawn as ${HS.num(p.reduced_to)} bins holding ` +
      `each bin's largest value` : "") + ". Drag to zoom, double-click to reset. " +
      (own ? "RSS and PSS are the program's: the recorder's own memory (its tables, rings, buffers) " +
        "is left out of them and drawn apart." : "RSS and PSS include the recorder's own memory " +
        "(recorded by an older heapscope, which did not measure it).")));
    box.append(HS.lineChart(`${p.label || p.exe}`, p.seconds, series, p.regions));
    const peaks = [["heap", "heap in use"], ["heap_mpi", "heap, MPI"], ["rss", own ? "RSS, program" : "RSS"],
      ["pss", own ? "PSS, program" : "PSS"], ["recorder", "recorder's own memory"]]
      .filter(([k]) => p.peaks[k]);
    box.append(el("h4", {}, "Peaks of the samples"), HS.table([
      { title: "series", key: (x) => x[1], cell: (x) => x[1] },
      { title: "sampled peak", num: true, key: (x) => p.peaks[x[0]].bytes, cell: (x) => HS.bytes(p.peaks[x[0]].bytes) },
      { title: "bytes", num: true, key: (x) => p.peaks[x[0]].bytes, cell: (x) => HS.num(p.peaks[x[0]].bytes) },
      { title: "at", num: true, key: (x) => p.peaks[x[0]].at_s, cell: (x) => HS.seconds(p.peaks[x[0]].at_s) },
      { title: "in region", key: (x) => p.peaks[x[0]].region, cell: (x) => p.peaks[x[0]].region }],
    peaks, { cls: "hs-peaks" }));
    if (p.heap_peaks) {
      box.append(el("p", { class: "hs-heap-peaks" }, `Heap peak, counted at every allocation and free ` +
        `(not only the samples): ${HS.bytes(p.heap_peaks.heap)}` + (p.heap_peaks.heap_mpi ?
        `; inside MPI calls ${HS.bytes(p.heap_peaks.heap_mpi)}, the rest ${HS.bytes(p.heap_peaks.heap_app)}` : "") + "."));
    }
    if (p.regions.length) {
      box.append(el("h4", {}, "Regions"), HS.table([
        { title: "region", key: (r) => r.region, cell: (r) => r.region },
        { title: "begin", num: true, key: (r) => r.begin_s, cell: (r) => HS.seconds(r.begin_s) },
        { title: "end", num: true, key: (r) => r.end_s, cell: (r) => r.end_s === null ? "open" : HS.seconds(r.end_s) },
        { title: "heap at begin", num: true, key: (r) => r.heap_begin, cell: (r) => HS.measured(r.heap_begin) },
        { title: "heap at end", num: true, key: (r) => r.heap_end, cell: (r) => HS.measured(r.heap_end) }],
      p.regions, { limit: 40, cls: "hs-regions" }));
    }
  };
  if (d.processes.length > 1) {
    body.append(HS.select("process", d.processes.map((p, i) => [String(i), HS.process(p)]),
      (v) => { which = Number(v); draw(); }, "0"));
  }
  body.append(box);
  draw();
};

HS.jobTimeline = function (body, job) {
  const el = HS.el;
  const names = { app: "application heap", mpi: "MPI heap", rss: "RSS, program", pss: "PSS, program",
    recorder: "recorder's own memory" };
  body.append(el("p", {}, `MPI job ${job.job_id || ""}: ${HS.num(job.ranks)} ranks on ` +
    `${job.hosts.join(", ")}.`));
  for (const w of job.warnings) body.append(el("p", { class: "hs-warn" }, w));
  const tl = job.timeline;
  if (!tl) {
    body.append(HS.absent("No rank has timeline samples here (recorded with the timeline off, " +
      "or known from the job file alone, which keeps no timelines)."));
  } else {
    const keys = Object.keys(names).filter((k) => tl.total[k]);
    body.append(el("h3", {}, "Sum over the ranks"), el("p", {}, `Each rank reduced to ${tl.points} ` +
      `bins holding its largest value in the bin, then added: an upper bound of the job's total.`),
    HS.lineChart("sum over ranks", tl.seconds, keys.map((k, i) => ({ label: names[k],
      values: tl.total[k], colour: HS.COLOURS[i] }))));
    let metric = keys[0];
    const perRank = el("div", { id: "hs-rank-timeline" });
    const draw = () => {
      perRank.textContent = "";
      const env = tl.envelopes[metric];
      const ranks = tl.per_rank.filter((r) => r[metric]).slice(0, 64);
      const series = ranks.map((r, i) => ({ label: `rank ${r.rank}`, values: r[metric],
        colour: HS.COLOURS[i % HS.COLOURS.length], width: 1 }));
      if (env) series.push({ label: "max over ranks", values: env.max, colour: "#222", dash: [6, 3], width: 2 },
        { label: "min over ranks", values: env.min, colour: "#888", dash: [6, 3], width: 2 });
      perRank.append(HS.lineChart(`${names[metric]} per rank`, tl.seconds, series, null, { height: 320 }));
      if (tl.per_rank.length > 64) perRank.append(HS.note(`The first 64 of ${tl.per_rank.length} ranks are drawn; the envelope covers all.`));
    };
    body.append(el("h3", {}, "Each rank, with the min/max envelope"),
      HS.select("series", keys.map((k) => [k, names[k]]), (v) => { metric = v; draw(); }, metric), perRank);
    draw();
  }
  const metrics = job.metrics;
  body.append(el("h3", {}, "Ranks (which rank on which host)"), HS.table([
    { title: "rank", num: true, key: (r) => r.rank, cell: (r) => r.rank },
    { title: "host", key: (r) => r.host, cell: (r) => r.host },
    { title: "pid", num: true, key: (r) => r.pid, cell: (r) => r.pid }].concat(metrics.map((m) => ({
    title: m.title, num: true, key: (r) => r[m.key] === null ? -1 : r[m.key],
    cell: (r) => m.unit === "bytes" ? HS.bytes(r[m.key]) : HS.num(r[m.key]) }))),
  job.per_rank, { limit: 128, cls: "hs-ranks" }));
  body.append(el("h3", {}, "Over the ranks: min, max, mean"), HS.table([
    { title: "figure", key: (m) => m.title, cell: (m) => m.title },
    { title: "min", num: true, key: (m) => job.stats[m.key].min, cell: (m) => HS.fmtUnit(job.stats[m.key].min, m.unit) },
    { title: "on", key: (m) => job.stats[m.key].min_rank,
      cell: (m) => `rank ${job.stats[m.key].min_rank} (${job.stats[m.key].min_host})` },
    { title: "max", num: true, key: (m) => job.stats[m.key].max, cell: (m) => HS.fmtUnit(job.stats[m.key].max, m.unit) },
    { title: "on", key: (m) => job.stats[m.key].max_rank,
      cell: (m) => `rank ${job.stats[m.key].max_rank} (${job.stats[m.key].max_host})` },
    { title: "mean", num: true, key: (m) => job.stats[m.key].mean, cell: (m) => HS.fmtUnit(Math.round(job.stats[m.key].mean), m.unit) }],
  metrics, { cls: "hs-stats" }));
  if (job.peak_stacks) HS.jobPeakStacks(body, job.peak_stacks);
};

// The job file's stack types at each rank's own tracking peak (analysis.job_peak_stacks).
HS.jobPeakStacks = function (body, ps) {
  const el = HS.el;
  body.append(el("h3", {}, "Who held the heap peak (stack types at each rank's own tracking peak)"));
  if (ps.absent) { body.append(HS.absent(ps.absent)); return; }
  body.append(el("p", {}, `${ps.ranks_tracked} of ${HS.counted(ps.ranks, "rank")} recorded with ` +
    `--track, each giving its ${ps.per_rank} largest types; bytes are requested bytes live at ` +
    `the rank's peak, summed over the ranks where the type is among those.`));
  if (!ps.exact) body.append(el("p", { class: "hs-warn" }, "Lower bounds: more types than a " +
    `message of the reduction keeps; bytes at most ${HS.num(ps.missing_bound)} short.`));
  const path = (t) => t.frames.map((f) => f.function || "??").join(" ← ");
  body.append(HS.table([
    { title: "bytes", num: true, key: (t) => t.bytes, cell: (t) => HS.num(t.bytes) },
    { title: "ranks", num: true, key: (t) => t.ranks, cell: (t) => t.ranks },
    { title: "most on one rank", num: true, key: (t) => t.bytes_max,
      cell: (t) => `${HS.num(t.bytes_max)} (rank ${t.max_rank})` },
    { title: "blocks", num: true, key: (t) => t.blocks, cell: (t) => HS.num(t.blocks) },
    { title: "sizes", num: true, key: (t) => t.size_min,
      cell: (t) => t.size_min === t.size_max ? HS.num(t.size_min) : `${HS.num(t.size_min)}–${HS.num(t.size_max)}` },
    { title: "region", key: (t) => t.region, cell: (t) => t.region },
    { title: "call path", key: path,
      cell: (t) => t.recorded ? HS.pathCell(path(t)) : "(no stack: tracked per size)" }],
  ps.types, { cls: "hs-peak-stacks" }));   // (its notes are the overview's)
};

HS.fmtUnit = (v, unit) => unit === "bytes" ? HS.bytes(v) : HS.num(v);

HS.measured = (v) => v === null || v === undefined || v < 0 ? "not measured" : HS.bytes(v);

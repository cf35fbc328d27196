// Section "Memory at scale" (heapscope scaling --html): per MPI library, each per-rank
// figure's measured points with its fitted law and 95% interval against the rank count
// (log scale), the predictions, the call paths' laws, the memory limit, and the MPI
// libraries side by side. Every figure, the curves included, comes from the page's JSON.
"use strict";
HS.SCALING_TITLES = { heap_peak_per_rank: "heap peak", rss_peak_per_rank: "RSS peak",
  pss_peak_per_rank: "PSS peak", nonheap_rss_per_rank: "non-heap RSS", nonheap_pss_per_rank: "non-heap PSS" };

// A uPlot chart of one figure: measured points, the law's curve and its interval's ends.
HS.scalingChart = function (title, measured, law) {
  const holder = HS.el("div", { class: "hs-chart hs-scaling-chart", "data-title": title });
  const curve = law.curve || [];
  const xs = [...new Set(curve.map((c) => c.ranks).concat(measured.map((m) => m[0])))].sort((a, b) => a - b);
  const at = (rows, key) => xs.map((x) => { const r = rows.find((c) => c.ranks === x); return r ? r[key] : null; });
  const points = xs.map((x) => { const m = measured.find((v) => v[0] === x); return m ? m[1] : null; });
  holder.points = measured;       // what the chart shows, for a reader of the DOM
  holder.curve = curve;
  const make = () => {
    const width = Math.max(420, Math.min(640, (holder.parentNode ? holder.parentNode.clientWidth : 640) - 10));
    return new uPlot({
      title, width, height: 260, scales: { x: { time: false, distr: 3, log: 2 } },
      series: [{ label: "ranks", value: (u, v) => v === null ? "-" : HS.num(v) },
        { label: "measured", stroke: "#d9480f", width: 0, paths: () => null,
          points: { show: true, size: 8, fill: "#d9480f" }, value: (u, v) => HS.bytes(v) },
        { label: `law: ${law.law}`, stroke: "#1c7ed6", width: 1.5, spanGaps: true, points: { show: false },
          value: (u, v) => HS.bytes(v) },
        { label: "95% low", stroke: "#74c0fc", dash: [4, 4], width: 1, spanGaps: true, points: { show: false },
          value: (u, v) => HS.bytes(v) },
        { label: "95% high", stroke: "#74c0fc", dash: [4, 4], width: 1, spanGaps: true, points: { show: false },
          value: (u, v) => HS.bytes(v) }],
      axes: [{ label: "ranks", values: (u, vals) => vals.map((v) => HS.num(v)) },
        { values: (u, vals) => vals.map(HS.bytes), size: 80 }],
    }, [xs, points, at(curve, "value"), at(curve, "low"), at(curve, "high")], holder);
  };
  requestAnimationFrame(() => { holder.uplot = make(); });
  return holder;
};

HS.scalingPrediction = (p) => p === null || p === undefined ? "-" :
  p.low === null ? `${HS.bytes(p.value)} (no interval)` : `${HS.bytes(p.value)} [${HS.bytes(p.low)}, ${HS.bytes(p.high)}]`;

HS.scalingLawText = function (law) {
  if (law.status === "no-points") return "not measured";
  if (law.status === "too-few-points") {
    return `no law chosen: ${law.why}; ` + law.through_points.map((f) =>
      `${f.law} predicts ${f.predictions.map((p) => `${HS.bytes(p.value)} at ${p.ranks}`).join(", ")}`).join("; ");
  }
  let text = `${law.law}: ${law.formula}, ` + Object.entries(law.coefficients).map(([k, v]) =>
    `${k} = ${v < 0 ? "-" : ""}${HS.bytes(Math.round(Math.abs(v)))}`).join(", ") +
    ` (held-out error ${HS.bytes(law.held_out_error)})`;
  for (const r of law.rivals) {
    text += `; fits as well, predicts differently: ${r.law} (${r.predictions.map((p) =>
      `${HS.scalingPrediction(p)} at ${p.ranks}`).join(", ")})`;
  }
  return text;
};

HS.sections.scaling = function (body, d) {
  const el = HS.el;
  const args = d.arguments.join(" ") || "(no arguments)";
  body.append(el("p", {}, `${d.program} ${args}: ${HS.counted(d.runs.length, "recording")}; per rank, ` +
    `${d.statistic}; laws fitted by least squares, chosen by ${d.method.choice}; ${d.method.interval}.`));
  if (d.limit) body.append(el("p", {}, `Memory limit: ${HS.bytes(d.limit.bytes)} a rank (${d.limit.source}).`));
  for (const w of d.warnings) body.append(el("p", { class: "hs-warn" }, w));
  const key = (x) => x.mpi_library + (x.by ? `, ${x.by.variable}=${x.by.value}` : "");
  d.paths.forEach((group, gi) => {
    const where = key(group), lim = d.limits[gi];
    const comps = d.components.filter((c) => key(c) === where);
    body.append(el("h3", {}, where));
    const charts = el("div", { class: "hs-hot" });
    const rows = [];
    for (const c of comps) {
      for (const f of c.fields) {
        const law = c.laws[f], title = `${c.component} ${HS.SCALING_TITLES[f] || f}`;
        const measured = c.measured.filter((m) => m[f] !== null && m[f] !== undefined).map((m) => [m.ranks, m[f]]);
        if (law.status === "chosen") charts.append(HS.scalingChart(`${title}: ${law.law}`, measured, law));
        rows.push({ title, law, measured });
      }
    }
    body.append(charts);
    body.append(HS.table([{ title: "figure", key: (r) => r.title, cell: (r) => r.title },
      { title: "measured", key: (r) => r.measured.length,
        cell: (r) => r.measured.map(([p, v]) => `${HS.bytes(v)} at ${p}`).join(", ") }]
      .concat(d.targets.map((t, i) => ({ title: `${HS.num(t)} ranks`, num: true,
        key: (r) => r.law.predictions ? r.law.predictions[i].value : -1,
        cell: (r) => HS.scalingPrediction(r.law.predictions ? r.law.predictions[i] : null) })))
      .concat([{ title: "law", key: (r) => r.law.law || "", cell: (r) => HS.scalingLawText(r.law) }]),
    rows, { cls: "hs-scaling-table" }));
    if (lim && lim.field) {
      body.append(el("p", {}, `The total ${HS.SCALING_TITLES[lim.field]} per rank would exceed the limit ` +
        (lim.ranks ? `at ${HS.num(lim.ranks)} ranks by its law (${lim.law})` : `never by its law (${lim.law})`) +
        (lim.upper_bound_ranks ? `, from ${HS.num(lim.upper_bound_ranks)} ranks by its 95% interval's high end.` : ".")));
    }
    if (group.types.length) {
      body.append(el("h4", {}, `Call paths: the largest stack types at the peak of the ${group.at_ranks}-rank run`));
      body.append(HS.table([
        { title: "call path", key: (t) => t.frames.length ? t.frames[0].function || "" : "",
          cell: (t) => t.frames.slice(0, 4).map((f) => f.function || `${f.module}+${f.offset}`).join(" < ") || "(no stack)" },
        { title: "library", key: (t) => t.library, cell: (t) => t.library },
        { title: "measured (most on one rank)", key: (t) => t.measured.length,
          cell: (t) => t.measured.map((m) => `${HS.bytes(m.bytes_max)} at ${m.ranks}`).join(", ") },
        { title: "law", key: (t) => t.law.law || "", cell: (t) => HS.scalingLawText(t.law) }],
      group.types, { cls: "hs-scaling-paths" }));
    } else if (group.absent) {
      body.append(HS.note(`Call paths: ${group.absent}`));
    }
  });
  for (const side of d.side_by_side) {
    body.append(el("h3", {}, "MPI memory per rank, side by side" + (side.by ? ` (${side.by.variable}=${side.by.value})` : "")));
    const cols = [{ title: "ranks", num: true, key: (r) => r.ranks, cell: (r) => HS.num(r.ranks) }];
    side.libraries.forEach((lib, i) => side.metrics.forEach((m) => cols.push({ title: `${lib}: ${m.title}`, num: true,
      key: (r) => r.libraries[i][m.key] || 0, cell: (r) => HS.bytes(r.libraries[i][m.key]) })));
    body.append(HS.table(cols, side.rows, { cls: "hs-scaling-side" }));
  }
  for (const n of d.notes) body.append(HS.note(n));
};

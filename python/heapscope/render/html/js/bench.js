// Section 7: bench results: per workload and metric, each configuration's median with its
// 95% bootstrap interval (uPlot bars with whiskers) and its ratio to the baseline.
"use strict";
HS.ciChart = function (title, names, medians, lows, highs) {
  const holder = HS.el("div", { class: "hs-chart", "data-title": title });
  const whiskers = (u) => {
    const ctx = u.ctx;
    ctx.save(); ctx.strokeStyle = "#222"; ctx.lineWidth = 1.5 * devicePixelRatio;
    names.forEach((_, i) => {
      if (lows[i] === null) return;
      const x = u.valToPos(i, "x", true), y0 = u.valToPos(lows[i], "y", true), y1 = u.valToPos(highs[i], "y", true);
      const w = 6 * devicePixelRatio;
      ctx.beginPath(); ctx.moveTo(x, y0); ctx.lineTo(x, y1);
      ctx.moveTo(x - w, y0); ctx.lineTo(x + w, y0); ctx.moveTo(x - w, y1); ctx.lineTo(x + w, y1); ctx.stroke();
    });
    ctx.restore();
  };
  requestAnimationFrame(() => {
    holder.uplot = new uPlot({
      title, width: 420, height: 240, scales: { x: { time: false, range: [-0.6, names.length - 0.4] },
        y: { range: (u, lo, hi) => [0, Math.max(hi, ...highs.filter((v) => v !== null)) * 1.1] } },
      series: [{ label: "configuration", value: (u, v) => v === null ? "-" : names[v] },
        { label: "median", fill: "rgba(28,126,214,0.45)", stroke: "#1c7ed6",
          paths: uPlot.paths.bars({ size: [0.6, 80] }), points: { show: false } }],
      axes: [{ values: (u, vals) => vals.map((v) => Number.isInteger(v) ? names[v] || "" : ""), splits: () => names.map((_, i) => i) },
        { size: 60 }],
      hooks: { draw: [whiskers] },
    }, [names.map((_, i) => i), medians], holder);
  });
  return holder;
};

HS.sections.bench = function (body, d) {
  const el = HS.el, s = d.settings;
  body.append(el("p", {}, `${s.mode}: ${s.configs.join(", ")}; ${s.runs} runs each after ${s.warmup} ` +
    `warm-up, interleaved; medians with ${Math.round(100 * s.confidence)}% bootstrap intervals ` +
    `(${s.resamples} resamples); ratios to ${s.baseline}.`));
  for (const why of Object.values(d.missing)) body.append(HS.note(why));
  const fmt = (v) => v === null || v === undefined ? "-" : Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(4);
  for (const c of d.commands) {
    body.append(el("h3", {}, `${c.name}`), el("p", { class: "hs-note" }, c.command.join(" ")));
    if (c.checksum_error) body.append(el("p", { class: "hs-warn" }, c.checksum_error));
    const ok = c.configs.filter((g) => g.stats && g.stats.wall);
    for (const g of c.configs.filter((x) => x.failure)) body.append(el("p", { class: "hs-warn" }, `${g.name}: ${g.failure.message}`));
    const charts = el("div", { class: "hs-hot" });
    for (const m of d.metrics.filter((m) => ok.some((g) => g.stats[m.key]))) {
      const st = ok.map((g) => g.stats[m.key]);
      charts.append(HS.ciChart(`${c.name}: ${m.title}`, ok.map((g) => g.name), st.map((x) => x.median),
        st.map((x) => x.median_ci[0]), st.map((x) => x.median_ci[1])));
    }
    body.append(charts, HS.table([{ title: "configuration", key: (g) => g.name, cell: (g) => g.name }]
      .concat(d.metrics.filter((m) => ok.some((g) => g.stats[m.key])).flatMap((m) => [
        { title: `${m.title} median`, num: true, key: (g) => g.stats[m.key].median, cell: (g) => fmt(g.stats[m.key].median) },
        { title: "interval", num: true, key: (g) => g.stats[m.key].median_ci[0],
          cell: (g) => `[${fmt(g.stats[m.key].median_ci[0])}, ${fmt(g.stats[m.key].median_ci[1])}]` },
        { title: `ratio`, num: true, key: (g) => g.ratios[m.key] ? g.ratios[m.key].value : 0,
          cell: (g) => g.ratios[m.key] && g.ratios[m.key].value !== null ? g.ratios[m.key].value.toFixed(3) +
            ` [${g.ratios[m.key].ci[0].toFixed(3)}, ${g.ratios[m.key].ci[1].toFixed(3)}]` : "-" }])),
    ok, { cls: "hs-bench" }));
  }
};

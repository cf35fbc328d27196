// Section 7: bench results: per workload and metric, each configuration's median with its
// 95% bootstrap interval (a bar with whiskers) and its ratio to the baseline.
"use strict";
// One chart of a metric: a row per configuration (its name, a bar to its median, the
// whisker of its interval, the median's value), so names never run into each other
// however many configurations there are; the scale under the bars starts at 0.
HS.ciChart = function (title, names, medians, lows, highs, fmt) {
  const el = HS.el, known = medians.concat(highs).filter((v) => v !== null && v !== undefined);
  const max = Math.max(0, ...known) || 1;
  const at = (v) => `${(100 * Math.max(0, v) / max).toFixed(3)}%`;
  const holder = el("div", { class: "hs-chart hs-ci-chart", "data-title": title },
    el("div", { class: "hs-chart-title" }, title));
  names.forEach((name, i) => {
    const m = medians[i], track = el("div", { class: "hs-ci-track" });
    if (m !== null && m !== undefined) track.append(el("div", { class: "hs-ci-bar", style: `width: ${at(m)}` }));
    if (lows[i] !== null && lows[i] !== undefined) {
      track.append(el("div", { class: "hs-ci-whisker", title: `interval [${fmt(lows[i])}, ${fmt(highs[i])}]`,
        style: `left: ${at(lows[i])}; width: calc(${at(highs[i])} - ${at(lows[i])})` }));
    }
    holder.append(el("div", { class: "hs-ci-row", "data-config": name },
      el("span", { class: "hs-ci-label", title: name }, name), track,
      el("span", { class: "hs-ci-value" }, fmt(m))));
  });
  holder.append(el("div", { class: "hs-ci-row hs-ci-axis" }, el("span"),
    el("div", { class: "hs-ci-scale" }, el("span", {}, "0"), el("span", {}, fmt(max / 2)), el("span", {}, fmt(max))),
    el("span")));
  holder.medians = medians;   // what the bars show, for a reader of the DOM
  return holder;
};

HS.sections.bench = function (body, d) {
  const el = HS.el, s = d.settings;
  body.append(el("p", {}, `${s.mode}: ${s.configs.join(", ")}; ${s.runs} runs each after ${s.warmup} ` +
    `warm-up, interleaved; medians with ${Math.round(100 * s.confidence)}% bootstrap intervals ` +
    `(${s.resamples} resamples); ratios to ${s.baseline}.`));
  for (const why of Object.values(d.missing)) body.append(HS.note(why));
  const fmt = (v) => v === null || v === undefined ? "-" : Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(4);
  const short = (v) => v === null || v === undefined ? "-" : Math.abs(v) >= 100 ? HS.num(Math.round(v)) : v.toPrecision(3);
  for (const c of d.commands) {
    body.append(el("h3", {}, `${c.name}`), el("p", { class: "hs-note" }, c.command.join(" ")));
    if (c.checksum_error) body.append(el("p", { class: "hs-warn" }, c.checksum_error));
    const ok = c.configs.filter((g) => g.stats && g.stats.wall);
    for (const g of c.configs.filter((x) => x.failure)) body.append(el("p", { class: "hs-warn" }, `${g.name}: ${g.failure.message}`));
    const charts = el("div", { class: "hs-hot" });
    for (const m of d.metrics.filter((m) => ok.some((g) => g.stats[m.key]))) {
      const st = ok.map((g) => g.stats[m.key]);
      charts.append(HS.ciChart(`${c.name}: ${m.title}`, ok.map((g) => g.name), st.map((x) => x.median),
        st.map((x) => x.median_ci[0]), st.map((x) => x.median_ci[1]), short));
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

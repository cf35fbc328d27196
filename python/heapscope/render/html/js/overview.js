// Section 1: who ran, the totals per region, and the warnings in plain words first.
"use strict";
HS.sections.overview = function (body, d) {
  const el = HS.el;
  if (d.warnings.length) {
    body.append(el("div", { class: "hs-warnings", id: "hs-warnings" },
      el("strong", {}, `Read first: ${d.warnings.length} warning${d.warnings.length > 1 ? "s" : ""}`),
      el("ul", {}, d.warnings.map((w) => el("li", {}, w)))));
  } else {
    body.append(el("p", { class: "hs-ok", id: "hs-warnings" },
      "No warnings: every file is complete, no stack was lost."));
  }
  if (d.notes.length) {   // every note of the page, once: a line per kind, its notes folded
    body.append(el("div", { class: "hs-notes", id: "hs-notes" },
      el("strong", {}, "Notes"),
      el("ul", {}, d.notes.map((k) => el("li", {}, k.notes.length
        ? el("details", {}, el("summary", {}, k.line), el("ul", {}, k.notes.map((n) => el("li", {}, n))))
        : k.line)))));
  }
  const procs = d.processes, first = procs[0];
  if (!procs.length) { // a job known from its job file alone
    const job = d.job;
    body.append(el("dl", { class: "hs-facts" }, [
      ["MPI job", job ? `${job.job_id || "(no id)"}: ${HS.num(job.ranks)} ranks on ` +
        `${job.hosts.length} host${job.hosts.length > 1 ? "s" : ""} (${job.hosts.join(", ")})` : "-"],
      ["input", d.inputs.join(" ")]].map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])));
    body.append(HS.absent("Only the job file was given (every rank's summary, reduced at " +
      "MPI_Finalize): its figures are in the timeline section. Sizes, stacks and timelines of " +
      "single processes need rank files (record --per-rank)."));
    return;
  }
  const command = first.cmdline.length ? first.cmdline.join(" ") : first.exe;
  const reasons = [...new Set(procs.map((p) => p.reason))].join(", ");
  const facts = [
    ["program", command],
    ["processes", procs.length === 1 ? HS.process(first) + ", " + HS.counted(first.threads, "thread")
      : `${procs.length} (${d.merged ? "merged" : "one by one"}): ` +
        procs.slice(0, 8).map(HS.process).join(", ") + (procs.length > 8 ? ", ..." : "")],
  ];
  if (d.job) facts.push(["MPI job", `${d.job.job_id || "(no id)"}: ${HS.num(d.job.ranks)} ranks on ` +
    `${d.job.hosts.length} host${d.job.hosts.length > 1 ? "s" : ""} (${d.job.hosts.join(", ")})`]);
  facts.push(["snapshot", procs.length === 1 ? `${first.snapshot} (${first.reason})` : reasons]);
  facts.push(["allocations", `${HS.num(d.all_regions.count)} (${HS.bytes(d.all_regions.bytes)} ` +
    `requested) in ${d.regions.length} region${d.regions.length !== 1 ? "s" : ""}, ` +
    `${HS.num(d.distinct_sizes)} distinct sizes`]);
  facts.push(["input", d.inputs.join(" ") + (d.compare ? "   compared with   " + d.compare.join(" ") : "")]);
  body.append(el("dl", { class: "hs-facts" }, facts.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])));
  if (!d.regions.length) {
    body.append(HS.absent("No allocation was recorded."));
    return;
  }
  body.append(el("h3", {}, "Totals per region"), HS.table([
    { title: "region", key: (r) => r, cell: (r) => r },
    { title: "allocations", num: true, key: (r) => d.totals[r].count, cell: (r) => HS.num(d.totals[r].count) },
    { title: "bytes", num: true, key: (r) => d.totals[r].bytes, cell: (r) => HS.num(d.totals[r].bytes) },
    { title: "share", num: true, key: (r) => d.totals[r].count,
      cell: (r) => HS.percent(d.all_regions.count ? d.totals[r].count / d.all_regions.count : 0) },
  ], d.regions, { cls: "hs-region-totals" }));
};

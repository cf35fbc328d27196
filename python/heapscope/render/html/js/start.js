// Lay out every section from the page's JSON. A section that fails says so in its box
// (and on the console), and the others still appear.
"use strict";
(function () {
  HS.data = JSON.parse(document.getElementById("hs-data").textContent);
  for (const body of document.querySelectorAll(".hs-body")) {
    const id = body.dataset.section, data = HS.data[id];
    try {
      if (data && data.absent) body.append(HS.absent(data.absent));
      else HS.sections[id](body, data);
    } catch (err) {
      body.append(HS.el("p", { class: "hs-error" }, `this section could not be drawn: ${err}`));
      console.error(err);
    }
  }
  const meta = HS.data.meta;
  document.getElementById("hs-footer").append(
    `heapscope ${meta.version}. Drawn with `,
    meta.libraries.filter((l) => l.name === "uplot" || l.name === "d3-flame-graph")
      .map((l) => `${l.name} ${l.version}`).join(", "),
    ` and d3 modules (licences: ${[...new Set(meta.libraries.map((l) => l.license))].join(", ")}).`);
  document.body.dataset.ready = "1";
})();

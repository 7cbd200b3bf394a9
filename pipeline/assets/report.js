/* guesslab report: tables from the page's JSON, then Plotly (inlined, gzip + base64). */
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("gl-data").textContent);
  const FIGURE_HEIGHT = 450; // px, a figure whose layout sets no height (report.css: the same)
  document.querySelectorAll(".gl-table").forEach((root) => {
    GL.Table(root, DATA.tables[Number(root.dataset.table)]);
  });
  document.body.dataset.tablesReady = String(DATA.tables.length);

  async function loadPlotly() {
    const packed = document.getElementById("plotly-gz");
    if (!packed) return false;
    const bin = atob(packed.textContent.trim());
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    const code = await new Response(stream).text();
    const script = document.createElement("script");
    script.textContent = code;
    document.head.appendChild(script);
    return typeof window.Plotly !== "undefined";
  }

  async function drawFigures() {
    const targets = document.querySelectorAll(".gl-figure");
    if (!targets.length) {
      document.body.dataset.figuresReady = "0";
      return;
    }
    if (!(await loadPlotly())) throw new Error("Plotly could not be unpacked");
    for (const div of targets) {
      const fig = DATA.figures[Number(div.dataset.figure)];
      const layout = fig.layout || {};
      // a responsive plot fills its element's height, so the element needs one of its own
      // (without it the element is 0 px tall and the plot spills over what follows)
      div.style.height = (layout.height || FIGURE_HEIGHT) + "px";
      await Plotly.newPlot(div, fig.data, layout, { responsive: true, displaylogo: false });
    }
    document.body.dataset.figuresReady = String(targets.length);
  }

  drawFigures().catch((err) => {
    document.querySelectorAll(".gl-figure").forEach((div) => {
      div.textContent = "This figure needs a browser with DecompressionStream: " + err;
    });
    document.body.dataset.figuresReady = "failed";
    console.error(err);
  });
})();

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

  // A figure narrower than this (px: a phone, a narrow window) gets its legend and colour
  // bar below the plot, in rows, so that the plot keeps the width; a wider one keeps them
  // beside it.  Titles are the page's text above each figure (pipeline/outputs/report.py), never
  // inside the drawing, so the toolbar (modebar) at its top right covers none.
  const NARROW = 640;
  const CONFIG = {
    responsive: true,
    displaylogo: false,
    modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d", "toggleSpikelines",
      "hoverClosestCartesian", "hoverCompareCartesian"],
  };

  /* The layout a figure ``width`` px wide is drawn with: narrow, the legend in rows below
     the plot and the colour bars horizontal below it, the figure taller by their height. */
  function fitted(fig, width) {
    const layout = JSON.parse(JSON.stringify(fig.layout || {}));
    const height = layout.height || FIGURE_HEIGHT;
    if (width >= NARROW) return { layout: { ...layout, height }, data: fig.data };
    const margin = layout.margin || {};
    layout.margin = { ...margin, l: Math.min(margin.l ?? 60, 60), r: 10 };
    const named = fig.data.filter((t) => t.showlegend !== false && t.name);
    let extra = 0;
    // Plotly shows a legend for two or more named series (or when the layout asks for one)
    if (layout.showlegend === true || (named.length > 1 && layout.showlegend !== false)) {
      const longest = Math.max(...named.map((t) => String(t.name).length));
      const perRow = Math.max(1, Math.floor((width - 20) / (7 * longest + 45)));
      extra += 22 * Math.ceil(named.length / perRow) + 30;
      layout.legend = { ...(layout.legend || {}), orientation: "h", x: 0, xanchor: "left",
        xref: "container", y: 0, yanchor: "bottom", yref: "container" };
    }
    const data = fig.data.map((trace) => {
      if (!("colorbar" in trace) || trace.showscale === false) return trace;
      extra += 90;
      const bar = trace.colorbar || {};
      return { ...trace, colorbar: { ...bar, orientation: "h", x: 0.5, xanchor: "center",
        y: 0, yanchor: "bottom", yref: "container", thickness: 14, len: 1,
        title: { ...(bar.title || {}), side: "bottom" } } };
    });
    return { layout: { ...layout, height: height + extra }, data };
  }

  async function draw(div, width) {
    const fig = DATA.figures[Number(div.dataset.figure)];
    const { layout, data } = fitted(fig, width);
    // a responsive plot fills its element's height, so the element needs one of its own
    // (without it the element is 0 px tall and the plot spills over what follows)
    div.style.height = layout.height + "px";
    if (div._fullLayout) Plotly.purge(div);  // drawn afresh: react kept the old plot's size
    await Plotly.newPlot(div, data, layout, CONFIG);
    div.dataset.narrow = String(width < NARROW);  // drawn for a narrow (or wide) window
  }

  async function drawFigures() {
    const targets = document.querySelectorAll(".gl-figure");
    if (!targets.length) {
      document.body.dataset.figuresReady = "0";
      return;
    }
    if (!(await loadPlotly())) throw new Error("Plotly could not be unpacked");
    for (const div of targets) await draw(div, div.clientWidth);
    document.body.dataset.figuresReady = String(targets.length);
    let pending = null;
    window.addEventListener("resize", () => {  // a phone turned: redraw what crossed NARROW
      clearTimeout(pending);
      pending = setTimeout(() => {
        for (const div of targets) {
          if (div.dataset.narrow !== String(div.clientWidth < NARROW)) draw(div, div.clientWidth);
        }
      }, 200);
    });
  }

  drawFigures().catch((err) => {
    document.querySelectorAll(".gl-figure").forEach((div) => {
      div.textContent = "This figure needs a browser with DecompressionStream: " + err;
    });
    document.body.dataset.figuresReady = "failed";
    console.error(err);
  });
})();

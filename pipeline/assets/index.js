/* guesslab index: the comparison view of two studies of one family (data from the page). */
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("gl-data").textContent);
  const view = document.getElementById("compare-view");
  const el = GL.el;
  if (!DATA.families.length) {
    view.appendChild(el("p", {}, "No family has two studies yet: nothing to compare."));
    document.body.dataset.compareReady = "none";
    return;
  }
  const bar = el("div", { class: "compare-bar" });
  const family = el("select", { id: "compare-family" });
  const a = el("select", { id: "compare-a" });
  const b = el("select", { id: "compare-b" });
  const onlyDiff = el("input", { type: "checkbox", id: "compare-only-diff" });
  const summary = el("span", { id: "compare-summary" });
  DATA.families.forEach((f, i) => family.appendChild(el("option", { value: i }, f.family)));
  const label = (text, input) => { const l = el("label", {}, text + " "); l.appendChild(input); return l; };
  const diffLabel = el("label", {});
  diffLabel.append(onlyDiff, " only rows that differ");
  bar.append(label("family", family), label("study A", a), label("study B", b), diffLabel, summary);
  const holder = el("div", { class: "gl-table", id: "compare-table" });
  view.append(bar, holder);

  function fillStudies() {
    const f = DATA.families[Number(family.value)];
    for (const [sel, pick] of [[a, 0], [b, 1]]) {
      sel.textContent = "";
      f.studies.forEach((s) => sel.appendChild(el("option", { value: s }, s)));
      sel.value = f.studies[Math.min(pick, f.studies.length - 1)];
    }
  }

  function same(x, y, kind) {
    if (x === null || y === null || kind !== "exact") return x === y;
    const p = GL.parseFrac(x), q = GL.parseFrac(y);
    return p && q ? GL.cmpFrac(p, q) === 0 : x === y;
  }

  function delta(x, y) {
    return typeof x === "number" && typeof y === "number" ? y - x : null;
  }

  /* Per kind of value: the format of its A and B columns, and its difference column. */
  const FORMATS = { number: ".12g" };
  const DIFFERENCES = { number: [delta, ".3e"], exact: [GL.fracDiff, ""] };

  function build() {
    const f = DATA.families[Number(family.value)];
    const A = f.data[a.value] || {}, B = f.data[b.value] || {};
    const columns = f.keys.map((k) => ({ name: k, kind: "text", format: "" }));
    for (const v of f.values) {
      const fmt = FORMATS[v.kind] || "", difference = DIFFERENCES[v.kind];
      columns.push({ name: v.name + " (A)", kind: v.kind, format: fmt });
      columns.push({ name: v.name + " (B)", kind: v.kind, format: fmt });
      if (difference) columns.push({ name: "\u0394 " + v.name, kind: v.kind, format: difference[1] });
    }
    columns.push({ name: "differs", kind: "text", format: "" });
    const rows = [], highlight = [];
    let differing = 0;
    for (const key of Object.keys(f.rows)) {
      if (!(key in A) || !(key in B)) continue;
      const row = f.rows[key].map((v) => (v === null ? null : String(v)));
      let differs = false;
      f.values.forEach((v, j) => {
        const x = A[key][j], y = B[key][j];
        row.push(x, y);
        const difference = DIFFERENCES[v.kind];
        if (difference) row.push(difference[0](x, y));
        if (!same(x, y, v.kind)) differs = true;
      });
      row.push(differs ? "yes" : "no");
      if (differs) differing += 1;
      if (onlyDiff.checked && !differs) continue;
      rows.push(row);
      highlight.push(differs);
    }
    summary.textContent = a.value === b.value
      ? "pick two different studies"
      : `${onlyDiff.checked ? "" : rows.length + " shared rows, "}${differing} differ`;
    GL.Table(holder, { columns, rows, highlight });
    holder.dataset.differing = differing;
    document.body.dataset.compareReady = String(rows.length);
  }

  family.addEventListener("change", () => { fillStudies(); build(); });
  for (const s of [a, b, onlyDiff]) s.addEventListener("change", build);
  fillStudies();
  build();
})();

/* guesslab: sortable, filterable, paged tables rendered from JSON (no library, no network).
 * Column kinds: "number" (JSON numbers, "inf"/"-inf", null), "exact" ("p/q" strings, sorted
 * and compared exactly with BigInt), "text".  Filters: text matches a substring (case
 * ignored; "=x" matches exactly); on numbers and exact values also ">x", ">=x", "<x",
 * "<=x", "=x", "!=x" and "a..b" (inclusive). */
"use strict";

const GL = (function () {
  const FRAC = /^\s*(-?\d+)\s*(?:\/\s*(\d+))?\s*$/;

  function parseFrac(v) {
    if (typeof v === "number" && Number.isInteger(v)) return [BigInt(v), 1n];
    if (typeof v !== "string") return null;
    const m = FRAC.exec(v);
    if (!m) return null;
    const q = m[2] === undefined ? 1n : BigInt(m[2]);
    return q === 0n ? null : [BigInt(m[1]), q];
  }

  /* A decimal such as "4.25" as an exact fraction [425n, 100n] (filters on exact columns). */
  function parseDecimal(s) {
    const m = /^\s*(-?)(\d*)\.(\d+)\s*$/.exec(s);
    if (!m) return null;
    const p = BigInt(m[1] + (m[2] || "0") + m[3]);
    return [p, 10n ** BigInt(m[3].length)];
  }

  function cmpFrac(a, b) {
    const x = a[0] * b[1], y = b[0] * a[1];
    return x < y ? -1 : x > y ? 1 : 0;
  }

  function gcd(a, b) {
    a = a < 0n ? -a : a;
    while (b) [a, b] = [b, a % b];
    return a;
  }

  /* b - a as a reduced "p/q" string (exact; an integer, 0 among them, without "/1"), or
     null when either is not a fraction. */
  function fracDiff(a, b) {
    const x = parseFrac(a), y = parseFrac(b);
    if (!x || !y) return null;
    const p = y[0] * x[1] - x[0] * y[1], q = x[1] * y[1];
    const g = gcd(p, q) || 1n;
    return q / g === 1n ? `${p / g}` : `${p / g}/${q / g}`;
  }

  function num(v) {
    if (v === null || v === undefined || v === "") return NaN;
    if (v === "inf") return Infinity;
    if (v === "-inf") return -Infinity;
    return typeof v === "number" ? v : Number(v);
  }

  function fmtNum(v, fmt) {
    if (v === null || v === undefined) return "";
    if (typeof v === "string") return v;
    const m = /^\.(\d+)([fge])$/.exec(fmt || "");
    if (!m || (Number.isInteger(v) && m[2] === "g" && Math.abs(v) < 1e15)) return String(v);
    const p = Number(m[1]);
    if (m[2] === "f") return v.toFixed(p);
    if (m[2] === "e") return v === 0 ? "0" : v.toExponential(p);
    let s = v.toPrecision(Math.max(1, p));
    if (s.includes("e")) {
      let [a, b] = s.split("e");
      if (a.includes(".")) a = a.replace(/\.?0+$/, "");
      return a + "e" + (b[0] === "-" ? b : "+" + b.replace("+", ""));
    }
    return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
  }

  function shortExact(s) {
    if (typeof s !== "string" || s.length <= 40) return s === null ? "" : String(s);
    const [p, q] = s.split("/");
    const cut = (t) => (t && t.length > 12 ? t.slice(0, 6) + "\u2026" + t.slice(-4) : t || "");
    return cut(p) + (q === undefined ? "" : "/" + cut(q)) + " (" + s.length + " chars)";
  }

  const OPS = /^\s*(<=|>=|!=|<|>|=)\s*(\S+)\s*$/;
  const RANGE = /^\s*(\S+?)\s*\.\.\s*(\S+)\s*$/;

  /* A predicate for one column's filter text; null when the filter is empty. */
  function matcher(text, kind) {
    const t = text.trim();
    if (!t) return null;
    const lower = t.toLowerCase();
    const substring = (cell) => cell.display.toLowerCase().includes(lower);
    return (MATCHERS[kind] || numberMatcher)(t, substring);
  }

  function textMatcher(t, substring) {
    if (t[0] === "=") return (cell) => cell.display === t.slice(1).trim();
    return substring;
  }

  function exactMatcher(t, substring) {
    const op = OPS.exec(t), range = RANGE.exec(t);
    const exact = (s) => parseFrac(s) || parseDecimal(s);
    if (op && exact(op[2])) {
      const b = exact(op[2]);
      return (cell) => cell.key !== null && test(op[1], cmpFrac(cell.key, b));
    }
    if (range && exact(range[1]) && exact(range[2])) {
      const a = exact(range[1]), b = exact(range[2]);
      return (cell) => cell.key !== null && cmpFrac(cell.key, a) >= 0 && cmpFrac(cell.key, b) <= 0;
    }
    return substring;
  }

  function numberMatcher(t, substring) {
    const op = OPS.exec(t), range = RANGE.exec(t);
    if (op && !Number.isNaN(num(op[2]))) {
      const b = num(op[2]);
      return (cell) => !Number.isNaN(cell.key) && test(op[1], cell.key < b ? -1 : cell.key > b ? 1 : 0);
    }
    if (range && !Number.isNaN(num(range[1])) && !Number.isNaN(num(range[2]))) {
      const a = num(range[1]), b = num(range[2]);
      return (cell) => cell.key >= a && cell.key <= b;
    }
    return substring;
  }

  const MATCHERS = { text: textMatcher, exact: exactMatcher, number: numberMatcher };

  function test(op, c) {
    return { "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0, "=": c === 0, "!=": c !== 0 }[op];
  }

  /* Per column kind: a cell's text and its sort key, and how two keys compare. */
  const CELLS = {
    number: (value, col) => ({ display: fmtNum(value, col.format), key: num(value) }),
    exact: (value) => ({ display: value === null ? "" : String(value), key: parseFrac(value) }),
    text: (value) => ({ display: value === null || value === undefined ? "" : String(value), key: value === null ? null : String(value) }),
  };

  function cell(value, col) {
    return (CELLS[col.kind] || CELLS.text)(value, col);
  }

  const NULLS_LAST = (a, b) => (a.key === b.key ? 0 : a.key === null ? 1 : -1);
  const COMPARE = {
    number: (a, b) => {
      const na = Number.isNaN(a.key), nb = Number.isNaN(b.key);
      if (na || nb) return na && nb ? 0 : na ? 1 : -1;
      return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
    },
    exact: (a, b) => (a.key === null || b.key === null ? NULLS_LAST(a, b) : cmpFrac(a.key, b.key)),
    text: (a, b) => (a.key === null || b.key === null ? NULLS_LAST(a, b)
      : a.key.localeCompare(b.key, undefined, { numeric: true })),
  };

  function compare(a, b, kind) {
    return (COMPARE[kind] || COMPARE.text)(a, b);
  }

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /* The table's columns in words (a header's tooltip says the same; a phone has none). */
  function legend(cols) {
    const box = el("details", { class: "gl-columns" });
    box.appendChild(el("summary", {}, "What each column holds"));
    const list = el("dl");
    for (const col of cols) {
      list.append(el("dt", {}, col.name), el("dd", {}, col.about || ""));
    }
    box.appendChild(list);
    return box;
  }

  /* Render table ``spec`` ({columns, rows, highlight?}) into ``root``. */
  function Table(root, spec) {
    const cols = spec.columns;
    const cells = spec.rows.map((row) => row.map((v, j) => cell(v, cols[j])));
    const state = { sort: -1, dir: 1, filters: cols.map(() => null), global: "", page: 0, size: 50 };
    root.textContent = "";
    root.classList.add("gl-ready");
    const bar = el("div", { class: "gl-bar" });
    const search = el("input", { type: "search", class: "gl-search", placeholder: "filter all columns" });
    const count = el("span", { class: "gl-count" });
    const prev = el("button", { type: "button", class: "gl-prev" }, "\u2190 previous");
    const next = el("button", { type: "button", class: "gl-next" }, "next \u2192");
    const size = el("select", { class: "gl-size" });
    for (const n of [50, 200, 1000, "all"]) size.appendChild(el("option", { value: n }, n + " per page"));
    bar.append(search, prev, next, size, count);
    const wrap = el("div", { class: "gl-wrap" });
    const table = el("table", { class: "gl" });
    const head = el("thead");
    const names = el("tr");
    const filters = el("tr", { class: "gl-filters" });
    cols.forEach((col, j) => {
      const about = col.about ? col.name + ": " + col.about + " (click to sort)" : "sort by " + col.name;
      const th = el("th", { class: "gl-" + col.kind, title: about }, col.name);
      th.addEventListener("click", () => {
        state.dir = state.sort === j ? -state.dir : 1;
        state.sort = j;
        names.querySelectorAll("th").forEach((h) => h.removeAttribute("data-sort"));
        th.setAttribute("data-sort", state.dir > 0 ? "asc" : "desc");
        state.page = 0;
        draw();
      });
      names.appendChild(th);
      const td = el("td");
      const hint = col.kind !== "text" ? ">x, a..b, text" : "text";
      const input = el("input", { type: "search", placeholder: hint, "data-column": col.name });
      input.addEventListener("input", () => {
        state.filters[j] = matcher(input.value, col.kind);
        state.page = 0;
        draw();
      });
      td.appendChild(input);
      filters.appendChild(td);
    });
    head.append(names, filters);
    const body = el("tbody");
    table.append(head, body);
    wrap.appendChild(table);
    root.append(bar, wrap);
    if (cols.some((col) => col.about)) root.appendChild(legend(cols));
    search.addEventListener("input", () => { state.global = search.value.trim().toLowerCase(); state.page = 0; draw(); });
    prev.addEventListener("click", () => { state.page = Math.max(0, state.page - 1); draw(); });
    next.addEventListener("click", () => { state.page += 1; draw(); });
    size.addEventListener("change", () => { state.size = size.value === "all" ? Infinity : Number(size.value); state.page = 0; draw(); });

    function visible() {
      let idx = cells.map((_, i) => i);
      const active = state.filters.map((f, j) => [f, j]).filter(([f]) => f);
      if (active.length) idx = idx.filter((i) => active.every(([f, j]) => f(cells[i][j])));
      if (state.global) idx = idx.filter((i) => cells[i].some((c) => c.display.toLowerCase().includes(state.global)));
      if (state.sort >= 0) {
        const j = state.sort, kind = cols[j].kind;
        idx.sort((a, b) => state.dir * compare(cells[a][j], cells[b][j], kind) || a - b);
      }
      return idx;
    }

    function draw() {
      const idx = visible();
      const pages = Math.max(1, Math.ceil(idx.length / state.size));
      state.page = Math.min(state.page, pages - 1);
      const start = state.page * state.size;
      const shown = idx.slice(start, start + state.size);
      const frag = document.createDocumentFragment();
      for (const i of shown) {
        const tr = el("tr");
        if (spec.highlight && spec.highlight[i]) tr.className = "gl-diff";
        cells[i].forEach((c, j) => {
          const kind = cols[j].kind;
          const text = kind !== "exact" ? c.display : shortExact(c.display);
          const td = el("td", { class: "gl-" + kind }, text);
          if (text !== c.display) td.title = c.display;
          frag.appendChild(tr).appendChild(td);
        });
      }
      body.textContent = "";
      body.appendChild(frag);
      prev.disabled = state.page === 0;
      next.disabled = state.page >= pages - 1;
      const first = idx.length ? start + 1 : 0;
      count.textContent = `rows ${first}\u2013${start + shown.length} of ${idx.length}` +
        (idx.length !== cells.length ? ` (filtered from ${cells.length})` : "");
      root.dataset.total = cells.length;
      root.dataset.filtered = idx.length;
      root.dataset.shown = shown.length;
    }
    draw();
    return { draw };
  }

  return { Table, parseFrac, cmpFrac, fracDiff, fmtNum, el };
})();

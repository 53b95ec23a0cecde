// Every table of the report sorts by a click on its header (numbers as numbers) and downloads as CSV, its rows in the
// order shown; a table drawn by script (the answer browser) hands over its own rows and its own sort.
(function () {
  "use strict";
  const NUMBER = /^\s*[<>+]?\s*(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)/i;
  const clean = (s) => String(s ?? "").replace(/\s+/g, " ").trim();

  // A sort key: [0, number] for a cell that starts with a number, [1, text] for other text, [2] for nothing ("-").
  function key(text) {
    const t = clean(text);
    if (t === "" || t === "-" || t === "—") return [2, 0];
    const m = NUMBER.exec(t);
    return m ? [0, parseFloat(m[1])] : [1, t];
  }

  function compare(a, b) {
    if (a[0] !== b[0]) return a[0] - b[0];
    if (a[0] === 0) return a[1] - b[1];
    return a[0] === 1 ? a[1].localeCompare(b[1], undefined, { numeric: true }) : 0;
  }

  // Positions 0..n-1 ordered by the keys (ascending or descending; empty cells last either way; ties keep order).
  function order(keys, descending) {
    const idx = keys.map((_, i) => i);
    idx.sort((i, j) => {
      const a = keys[i], b = keys[j];
      if (a[0] === 2 || b[0] === 2) return (a[0] === 2) - (b[0] === 2) || i - j;
      return (descending ? -compare(a, b) : compare(a, b)) || i - j;
    });
    return idx;
  }

  function csvCell(text) {
    const t = clean(text);
    return /[",\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t;
  }

  function csv(header, rows) {
    return [header, ...rows].map((row) => row.map(csvCell).join(",")).join("\r\n") + "\r\n";
  }

  function download(name, text) {
    const url = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  }

  const headerOf = (table) => [...table.tHead.rows[0].cells].map((c) => clean(c.dataset.label || c.textContent));
  const domRows = (table) => [...table.tBodies[0].rows].map((r) => [...r.cells].map((c) => clean(c.innerText)));

  // source: {rows(): the rows in the order shown, sort(column, descending)}; by default the table's own DOM rows.
  function sortable(table, source) {
    const body = table.tBodies[0];
    source = source || {
      rows: () => domRows(table),
      sort(column, descending) {
        const rows = [...body.rows];
        const ranked = order(rows.map((r) => key(r.cells[column] ? r.cells[column].innerText : "")), descending);
        body.append(...ranked.map((i) => rows[i]));
      },
    };
    [...table.tHead.rows[0].cells].forEach((th, column) => {
      th.dataset.label = clean(th.textContent);
      th.classList.add("sort");
      th.title = "Sort by this column (click again to reverse)";
      th.addEventListener("click", () => {
        const descending = th.getAttribute("aria-sort") === "ascending";
        [...table.tHead.rows[0].cells].forEach((c) => c.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", descending ? "descending" : "ascending");
        source.sort(column, descending);
      });
    });
    const button = document.createElement("button");
    button.className = "csv";
    button.textContent = "CSV";
    button.title = "Download this table as CSV, its rows in the order shown";
    button.dataset.table = table.id;
    button.addEventListener("click", () => download(`${table.id || "table"}.csv`, csv(headerOf(table), source.rows())));
    table.before(button);
  }

  window.reportTables = { sortable, order, key, clean };
  document.querySelectorAll("section table").forEach((t) => {
    if (t.tHead && t.tBodies.length && !t.dataset.scripted) sortable(t);
  });
})();

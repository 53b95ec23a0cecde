// Model against model: pick two rows; per task the questions paired by id (seeds averaged within a question, never new
// pairs), A - B with its 95% interval, the sign-flip p and the Benjamini-Hochberg q over every comparison of the report
// (computed by core/significance.py), the difference detectable at 80% power (core/power.py), and the questions each
// did better on, linked to their answers.
(function () {
  "use strict";
  const D = window.reportBrowser.data;  // parsed once, by the browser
  const P = D.paired, Q = D.questions, R = D.records, RUNS = D.runs;
  const $ = (id) => document.getElementById(id);
  const el = window.reportBrowser.el;
  const pText = (p) => (p < 1e-4 ? p.toExponential(2) : p.toPrecision(3));
  const pct = (x) => (100 * x).toFixed(1);
  const points = (x) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)}`;
  // past 100 points no difference of two accuracies is detectable: say so, never the figure (core/power.py)
  const detectable = (r) => (r.mdd == null ? "-" : r.mdd > 1 ? `none with n=${r.n}` : (100 * r.mdd).toFixed(1));

  function fill(id, chosen) {
    P.models.forEach((m, n) => $(id).appendChild(el("option", { value: String(n) }, m)));
    $(id).value = String(chosen);
  }

  // Each run's records (the browser writes a run's records together): [first, last + 1) by run index.
  const spans = RUNS.map(() => [0, 0]);
  for (let i = R.run.length - 1; i >= 0; i--) spans[R.run[i]][0] = i;
  R.run.forEach((run, i) => { spans[run][1] = i + 1; });

  // question id -> seed -> record index, over the records the paired test counted of one row on one task
  function answersOf(row, cell) {
    const out = new Map();
    RUNS.forEach((run, r) => {
      if (run.row !== row || run.cell !== cell) return;
      for (let i = spans[r][0]; i < spans[r][1]; i++) {
        if (!R.paired[i]) continue;
        const id = Q[R.q[i]][0];
        if (!out.has(id)) out.set(id, new Map());
        out.get(id).set(run.seed, i);
      }
    });
    return out;
  }

  // The questions A did better on and those B did (as the test counts them: over the seeds both ran, else each
  // side's own), each as [A's record indices, B's].
  function better(a, b, cell, seeds) {
    const mine = answersOf(P.models[a], cell), theirs = answersOf(P.models[b], cell), out = [[], []];
    const right = (list) => list.reduce((sum, i) => sum + (R.correct[i] === 1), 0);
    mine.forEach((bySeed, id) => {
      const other = theirs.get(id);
      if (!other) return;
      const used = (side) => (seeds.length ? seeds.filter((s) => bySeed.has(s) && other.has(s)).map((s) => side.get(s))
        : [...side.keys()].sort((x, y) => x - y).map((s) => side.get(s)));
      const [x, y] = [used(bySeed), used(other)];
      if (!x.length) return;
      const diff = right(x) * y.length - right(y) * x.length;
      if (diff) out[diff > 0 ? 0 : 1].push([x, y]);
    });
    return out;
  }

  // The rows of the pair (a, b) in the order asked: the stored rows put the lower model index first; swapped, the
  // accuracies, the interval's sign and the counts change places.
  function rowsFor(a, b) {
    const rows = P.cells[`${Math.min(a, b)},${Math.max(a, b)}`] || [];
    return rows.map(([t, n, seeds, unA, unB, accA, accB, lo, hi, p, q, nA, nB, mdd]) => (a < b ?
      { t, n, seeds, unA, unB, accA, accB, lo, hi, p, q, nA, nB, mdd } :
      { t, n, seeds, unA: unB, unB: unA, accA: accB, accB: accA, lo: -hi, hi: -lo, p, q, nA: nB, nB: nA, mdd }));
  }

  function link(i, word) {
    const a = el("a", { href: "#detail", "data-index": String(i) }, word);
    a.addEventListener("click", (event) => {
      event.preventDefault();
      window.reportBrowser.show(i);
      $("detail").scrollIntoView({ block: "start" });
    });
    return a;
  }

  // One question: its id, how often each side was right over the seeds used, and a link to each answer.
  function item(li, [mine, theirs]) {
    const right = (list) => list.reduce((sum, i) => sum + (R.correct[i] === 1), 0);
    li.appendChild(document.createTextNode(`${Q[R.q[mine[0]]][0]}: A right ${right(mine)}/${mine.length}, ` +
      `B right ${right(theirs)}/${theirs.length} · `));
    for (const [side, indices] of [["A", mine], ["B", theirs]]) {
      for (const i of indices) {
        li.appendChild(link(i, `${side}'s (seed ${RUNS[R.run[i]].seed})`));
        li.append(" ");
      }
    }
  }

  function list(title, questions) {
    const box = el("div", { class: "discordant" });
    box.appendChild(el("div", { class: "note" }, `${title} (${questions.length})`));
    const ul = box.appendChild(el("ul"));
    questions.forEach((indices) => item(ul.appendChild(el("li")), indices));
    return box;
  }

  function render() {
    const a = Number($("p-a").value), b = Number($("p-b").value), body = $("paired").tBodies[0], lists = $("p-lists");
    body.replaceChildren();
    lists.replaceChildren();
    if (a === b) {
      $("p-note").textContent = "Pick two different rows.";
      $("p-served").textContent = "";
      return;
    }
    const rows = rowsFor(a, b);
    // how the two rows were served otherwise (their serving manifests), beside any change in answers
    const served = P.served[`${a},${b}`];  // as A's value -> B's
    $("p-served").textContent = served === undefined ? "" : (served.length ?
      `Served otherwise (serving manifests): ${served.join("; ")}.` : "Served alike: their serving manifests match.");
    const paired = {};  // what the items are called -> how many paired
    rows.forEach((r) => { paired[P.nouns[r.t]] = (paired[P.nouns[r.t]] || 0) + r.n; });
    const counted = Object.entries(paired).map(([noun, n]) => `${n} ${noun}`).join(" and ");
    $("p-note").textContent = rows.length ? `${counted} paired by id over ${rows.length} ` +
      `task${rows.length > 1 ? "s" : ""} (n counts ${Object.keys(paired).join(" and ")}; each one's answers averaged ` +
      `over the seeds both ran, never counted as new pairs); A = ${P.models[a]}, B = ${P.models[b]}. p: ${P.method}; q: ` +
      `Benjamini-Hochberg over all ${P.tests} comparisons in this report; call a difference only where q < ${P.fdr}.` :
      `${P.models[a]} and ${P.models[b]} share no task on the same pack: nothing to pair.`;
    rows.forEach((r) => {
      const tr = body.appendChild(el("tr"));
      [P.tasks[r.t], r.n, r.seeds.length ? r.seeds.join(", ") : "none shared", pct(r.accA), pct(r.accB),
        `${points(r.accA - r.accB)} [${points(r.lo)}, ${points(r.hi)}]`, pText(r.p), pText(r.q),
        r.q < P.fdr ? "yes" : "no", detectable(r), r.nA, r.nB, r.unA, r.unB]
        .forEach((v) => tr.appendChild(el("td", {}, v)));
      if (!r.nA && !r.nB) return;
      if (D.pages) {  // a large folder's report: each side's answers on this task are on a page of their own
        const note = lists.appendChild(el("p", { class: "note", "data-task": P.tasks[r.t] },
          `${P.tasks[r.t]}: A better on ${r.nA} ${P.nouns[r.t]}, B better on ${r.nB}; the answers: `));
        [[a, "A"], [b, "B"]].forEach(([m, side]) => {
          const href = D.pages[`${P.models[m]}\u0000${P.tasks[r.t]}`];
          if (href) note.append(el("a", { href }, `${side}'s page`), " ");
        });
        return;
      }
      const [betterA, betterB] = better(a, b, P.tasks[r.t], r.seeds);
      const details = lists.appendChild(el("details", { "data-task": P.tasks[r.t] }));
      details.appendChild(el("summary", {},
        `${P.tasks[r.t]}: A better on ${betterA.length} ${P.nouns[r.t]}, B better on ${betterB.length}`));
      details.appendChild(list(`A (${P.models[a]}) better`, betterA));
      details.appendChild(list(`B (${P.models[b]}) better`, betterB));
    });
  }

  if ($("p-a")) {  // the page has the view only where there are two rows to compare
    // first shown: the two rows with the most questions paired
    const paired = (key) => P.cells[key].reduce((sum, r) => sum + r[1], 0);
    const best = Object.keys(P.cells).sort((x, y) => paired(y) - paired(x))[0] || "0,1";
    const [a, b] = best.split(",").map(Number);
    fill("p-a", a);
    fill("p-b", b);
    $("p-a").addEventListener("change", render);
    $("p-b").addEventListener("change", render);
    render();
  }
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";  // tests and the benchmark wait for this: every script ran, the page is live
})();

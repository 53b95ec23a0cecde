// Model against model: pick two; per task the answers paired by question id and seed, the questions only one gets
// right (each linked to its answer detail), and McNemar's exact p on those discordant pairs (computed by stats.py).
(function () {
  "use strict";
  const D = window.reportBrowser.data;  // parsed once, by the browser
  const P = D.paired, T = D.texts, Q = D.questions, R = D.records, RUNS = D.runs;
  const $ = (id) => document.getElementById(id);
  const el = window.reportBrowser.el;
  const pText = (p) => (p < 1e-4 ? p.toExponential(2) : p.toPrecision(3));

  function fill(id, chosen) {
    P.models.forEach((m, n) => $(id).appendChild(el("option", { value: String(n) }, m)));
    $(id).value = String(chosen);
  }

  // [first model's records, second's], each stored as differences (report/paired.py) -> [iA, iB, iA, iB, ...]
  function pairs([firsts, seconds], swapped) {
    const out = [];
    let x = 0, y = 0;
    firsts.forEach((d, n) => {
      x += d;
      y += seconds[n];
      out.push(swapped ? y : x, swapped ? x : y);
    });
    return out;
  }

  // The rows of the pair (a, b) in the order asked: the stored rows put the lower model index first.
  function rowsFor(a, b) {
    const rows = P.cells[`${Math.min(a, b)},${Math.max(a, b)}`] || [];
    return rows.map(([t, matched, unA, unB, p, onlyA, onlyB]) => (a < b ?
      [t, matched, unA, unB, p, pairs(onlyA, false), pairs(onlyB, false)] :
      [t, matched, unB, unA, p, pairs(onlyB, true), pairs(onlyA, true)]));
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

  function list(title, flat) {
    const box = el("div", { class: "discordant" });
    box.appendChild(el("div", { class: "note" }, `${title} (${flat.length / 2})`));
    const ul = box.appendChild(el("ul"));
    for (let n = 0; n < flat.length; n += 2) {
      const li = ul.appendChild(el("li"));
      li.appendChild(document.createTextNode(`${Q[R.q[flat[n]]][0]} · seed ${RUNS[R.run[flat[n]]].seed}: `));
      li.appendChild(link(flat[n], "A's answer"));
      li.appendChild(document.createTextNode(" · "));
      li.appendChild(link(flat[n + 1], "B's answer"));
    }
    return box;
  }

  function render() {
    const a = Number($("p-a").value), b = Number($("p-b").value), body = $("paired").tBodies[0], lists = $("p-lists");
    body.replaceChildren();
    lists.replaceChildren();
    if (a === b) {
      $("p-note").textContent = "Pick two different models.";
      return;
    }
    const rows = rowsFor(a, b);
    const matched = rows.reduce((sum, r) => sum + r[1], 0);
    $("p-note").textContent = rows.length ? `${matched} pairs matched by question id and seed over ${rows.length} ` +
      `task${rows.length > 1 ? "s" : ""} (scored answers only); A = ${P.models[a]}, B = ${P.models[b]}.` :
      `${P.models[a]} and ${P.models[b]} share no task: nothing to pair.`;
    rows.forEach(([t, n, unA, unB, p, onlyA, onlyB]) => {
      const tr = body.appendChild(el("tr"));
      [P.tasks[t], n, onlyA.length / 2, onlyB.length / 2, pText(p), unA, unB]
        .forEach((v) => tr.appendChild(el("td", {}, v)));
      if (!onlyA.length && !onlyB.length) return;
      const details = lists.appendChild(el("details", { "data-task": P.tasks[t] }));
      details.appendChild(el("summary", {},
        `${P.tasks[t]}: only A right ${onlyA.length / 2}, only B right ${onlyB.length / 2}`));
      details.appendChild(list(`Only A (${P.models[a]}) right`, onlyA));
      details.appendChild(list(`Only B (${P.models[b]}) right`, onlyB));
    });
  }

  if ($("p-a")) {  // the page has the view only where there are two models to compare
    // first shown: the two models with the most answers paired
    const matched = (key) => P.cells[key].reduce((sum, r) => sum + r[1], 0);
    const best = Object.keys(P.cells).sort((x, y) => matched(y) - matched(x))[0] || "0,1";
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

// The question browser: filters over every record (typed-array scan), a paginated sortable table, and beside it the
// detail of one answer (its clips, their physical parameters, A-then-B playback), stepped through with j/k or arrows.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("report-data").textContent);
  const R = D.records, T = D.texts, RUNS = D.runs, Q = D.questions, N = R.run.length, PAGE = 50;
  const text = (i) => (i === -1 || i === null ? null : T[i]);
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, content) => {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, v));
    if (content !== undefined && content !== null) node.textContent = String(content);
    return node;
  };
  const runOf = (i) => RUNS[R.run[i]];
  // [id, prompt, clips, expected, level, the item's facets ([name, value] pairs), clip captions, physical parameters,
  // gap between two clips]
  const question = (i) => Q[R.q[i]];
  if (!$("answers")) {  // a large folder's report: its answers lie on pages of their own (D.pages), none here
    window.reportBrowser = { show: () => {}, data: D, el };
    return;
  }
  let matches = new Int32Array(0), page = 0, selected = -1, timer = null;

  function options(id, values) {
    const select = $(id);
    [...new Set(values)].sort((a, b) => (typeof a === "number" ? a - b : String(a).localeCompare(String(b))))
      .forEach((v) => select.appendChild(el("option", { value: String(v) }, v)));
  }
  options("f-model", RUNS.map((r) => r.model));
  options("f-task", RUNS.map((r) => r.task + (r.variant ? " " + r.variant : "")));
  options("f-seed", RUNS.map((r) => r.seed));
  options("f-status", R.status.map((s) => T[s]));

  function referenceDisagrees(i) {
    return R.ref[i] !== -1 && (text(R.ref[i]) || null) !== text(R.label[i]);
  }

  function apply() {
    const model = $("f-model").value, task = $("f-task").value, seed = $("f-seed").value, status = $("f-status").value;
    const correct = $("f-correct").value, flips = $("f-flips").checked, ref = $("f-ref").checked;
    const id = $("f-id").value.trim().toLowerCase();
    const runOk = RUNS.map((r) => (!model || r.model === model) && (!seed || String(r.seed) === seed) &&
      (!task || r.task + (r.variant ? " " + r.variant : "") === task));
    const statusIndex = status ? T.indexOf(status) : -2;
    const want = correct === "right" ? 1 : correct === "wrong" ? 0 : correct === "none" ? -1 : null;
    const out = new Int32Array(N);
    let count = 0;
    for (let i = 0; i < N; i++) {
      if (!runOk[R.run[i]]) continue;
      if (statusIndex !== -2 && R.status[i] !== statusIndex) continue;
      if (want !== null && R.correct[i] !== want) continue;
      if (flips && !R.flip[i]) continue;
      if (ref && !referenceDisagrees(i)) continue;
      if (id && !Q[R.q[i]][0].toLowerCase().includes(id)) continue;
      out[count++] = i;
    }
    matches = out.subarray(0, count);
    page = 0;
    [...$("answers").tHead.rows[0].cells].forEach((c) => c.removeAttribute("aria-sort"));  // back in record order
    render();
  }

  function cellCorrect(i) {
    const c = R.correct[i];
    return c === 1 ? ["right", "ok"] : c === 0 ? ["wrong", "bad"] : ["n/a", "na"];
  }

  const taskOf = (run) => run.task + (run.variant ? " " + run.variant : "");

  // The row's cells as text, in the header's order: what is drawn, sorted and exported.
  function cells(i) {
    const run = runOf(i), q = question(i);
    return [q[0], run.model, taskOf(run), run.seed, q[4] === null ? "" : q[4], text(R.status[i]),
      text(R.response[i]) || "—", text(R.label[i]) || "—", text(q[3]) || "—", cellCorrect(i)[0],
      R.ref[i] === -1 ? "" : text(R.ref[i]) || "(none)", R.flip[i] ? "flips" : ""];
  }

  function render() {
    const body = $("answers").tBodies[0];
    body.replaceChildren();
    const start = page * PAGE, end = Math.min(matches.length, start + PAGE);
    for (let j = start; j < end; j++) {
      const i = matches[j], values = cells(i);
      const tr = el("tr", { "data-index": String(i) });
      values.forEach((v, c) => {
        const attrs = c === 6 ? { class: "resp", title: text(R.response[i]) || "" } :
          c === 9 ? { class: cellCorrect(i)[1] } : c === 10 && referenceDisagrees(i) ? { class: "disagree" } : {};
        tr.appendChild(el("td", attrs, v));
      });
      if (i === selected) tr.className = "sel";
      tr.addEventListener("click", () => show(i));
      body.appendChild(tr);
    }
    $("count").textContent = matches.length ? `Showing ${start + 1}–${end} of ${matches.length} answers` :
      "No answer matches these filters";
    $("prev").disabled = page === 0;
    $("next").disabled = end >= matches.length;
  }

  // Sorting orders every matching answer (not only the page shown); the CSV holds them all, in that order.
  window.reportTables.sortable($("answers"), {
    rows: () => Array.from(matches, (i) => cells(i).map(String)),
    sort(column, descending) {
      const { order, key } = window.reportTables;
      const ranked = order(Array.from(matches, (i) => key(String(cells(i)[column]))), descending);
      matches = Int32Array.from(ranked, (j) => matches[j]);
      page = 0;
      render();
    },
  });

  function why(i) {
    const method = text(R.method[i]), judge = text(R.by[i]), status = text(R.status[i]);
    if (method === "scorer") return `string match of the response against the gold label (${judge || "strict"} scoring)`;
    if (method === "rules") return "the strict rules extractor found one unambiguous commitment in the response";
    if (method === "llm") return `the LLM judge (${judge || "judge model"}) read it; the rules extractor did not commit`;
    if (status === "error") return "no label: " + (text(R.error[i]) || "the request failed");
    if (status === "refused") return "no label: the model or provider declined to answer";
    return "no label: neither the rules nor a judge could read an option from the response";
  }

  function seedsOf(i) {
    const run = runOf(i), id = question(i)[0], found = [];
    if (run.own) return "none: the run's items are its own (another seed's same id is another trial)";
    for (let j = 0; j < N; j++) {
      const other = RUNS[R.run[j]];
      if (other.model === run.model && other.task === run.task && other.variant === run.variant &&
          JSON.stringify(other.facets) === JSON.stringify(run.facets) && Q[R.q[j]][0] === id) found.push(`${other.seed}: ${text(R.label[j]) || "—"}`);
    }
    return found.join(", ");
  }

  function clipCaption(q, n) {
    return q[6] && q[6][n] !== undefined ? text(q[6][n]) : `clip ${n + 1}`;
  }

  // Clip 1, then the harness's gap of silence, then clip 2: as a model that gets the two merged hears them.
  function playAB(a, b, gap) {
    clearTimeout(timer);
    [a, b].forEach((x) => { x.pause(); x.currentTime = 0; });
    a.addEventListener("ended", () => { timer = setTimeout(() => b.play(), 1000 * gap); }, { once: true });
    a.play();
  }

  function paramsTable(q) {
    const params = q[7] || [], n = q[2].length;
    if (!params.length) return null;
    const table = el("table", { class: "params" });
    const head = el("tr");
    head.appendChild(el("th", {}, "Parameter"));
    for (let c = 0; c < n; c++) head.appendChild(el("th", {}, clipCaption(q, c)));
    table.appendChild(el("thead")).appendChild(head);
    const body = table.appendChild(el("tbody"));
    params.forEach(([name, values]) => {
      const tr = body.appendChild(el("tr"));
      tr.appendChild(el("td", {}, text(name)));
      values.forEach((v) => tr.appendChild(el("td", values.length === 1 && n > 1 ? { colspan: String(n) } : {}, text(v))));
    });
    return table;
  }

  function show(i) {
    selected = i;
    const run = runOf(i), q = question(i), box = $("detail");
    box.replaceChildren();
    box.dataset.index = String(i);
    box.appendChild(el("h3", {}, `${q[0]} · ${run.model} · ${taskOf(run)} · seed ${run.seed}`));
    box.appendChild(el("div", { class: "note" }, "Prompt"));
    box.appendChild(el("pre", { class: "prompt" }, text(q[1])));
    const clips = el("div", { class: "clips" }), players = [];
    q[2].forEach((c, n) => {
      const fig = el("figure");
      fig.appendChild(el("figcaption", {}, clipCaption(q, n)));
      const src = D.clips[c];
      const audio = el("audio", { controls: "", preload: "auto" });
      if (src) audio.src = src;
      players.push(audio);
      fig.appendChild(audio);
      clips.appendChild(fig);
    });
    box.appendChild(clips);
    if (players.length === 2 && q[8] !== null && q[8] !== undefined) {
      const gap = q[8];
      const button = el("button", { id: "play-ab", "data-gap": String(gap),
        title: "The gap is the silence the harness puts between the two clips when a model takes them as one" },
        `▶ ${clipCaption(q, 0)}, ${gap} s of silence, then ${clipCaption(q, 1)}`);
      button.addEventListener("click", () => playAB(players[0], players[1], gap));
      box.appendChild(button);
    }
    const params = paramsTable(q);
    if (params) {
      box.appendChild(el("div", { class: "note" }, "What the pack made each clip with"));
      box.appendChild(params);
    }
    box.appendChild(el("div", { class: "note" }, "The model's raw answer"));
    box.appendChild(el("pre", { class: "response" }, text(R.response[i]) ?? "(no text: the request failed)"));
    const dl = el("dl");
    const [word] = cellCorrect(i);
    const rows = [["Status", text(R.status[i])], ["Chosen / read", text(R.label[i]) || "—"],
      ["Correct answer", text(q[3]) || "none (no option is correct)"], ["Scored", word], ["How the label was obtained", why(i)],
      [["Level", ...q[5].map(([name]) => name)].join(" / "), [q[4] ?? "-", ...q[5].map(([, v]) => v ?? "-")].join(" / ")], ["Notes", text(R.notes[i]) || "—"],
      ["Error", text(R.error[i]) || "—"], ["Latency", R.latency[i] === null ? "—" : R.latency[i] + " s"],
      ["Reference", R.ref[i] === -1 ? "no reference run of this model, task and seed on this pack" :
        (text(R.ref[i]) || "(none)") + (referenceDisagrees(i) ? "  ← disagrees with this run" : "  (agrees)") +
        ` — ${run.ref}`], ["Across seeds", seedsOf(i)], ["Run folder", run.folder]];
    rows.forEach(([k, v]) => {
      dl.appendChild(el("dt", {}, k));
      dl.appendChild(el("dd", k === "Reference" && referenceDisagrees(i) ? { class: "disagree" } : {}, v));
    });
    box.appendChild(dl);
    render();
  }

  // j / ↓: the next answer of the list, k / ↑: the previous one (turning the page where the list does).
  function step(delta) {
    if (!matches.length) return;
    const at = matches.indexOf(selected);
    const to = at < 0 ? 0 : Math.max(0, Math.min(matches.length - 1, at + delta));
    page = Math.floor(to / PAGE);
    show(matches[to]);
    const row = $("answers").querySelector("tr.sel");
    if (row) row.scrollIntoView({ block: "nearest" });
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || /^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName)) return;
    const delta = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 }[event.key];
    if (!delta) return;
    event.preventDefault();
    step(delta);
  });

  window.reportBrowser = { show, data: D, el };  // paired.js draws with the same element helper
  ["f-model", "f-task", "f-seed", "f-status", "f-correct", "f-flips", "f-ref"].forEach((id) =>
    $(id).addEventListener("change", apply));
  $("f-id").addEventListener("input", apply);
  $("prev").addEventListener("click", () => { page = Math.max(0, page - 1); render(); });
  $("next").addEventListener("click", () => { page += 1; render(); });
  apply();
})();

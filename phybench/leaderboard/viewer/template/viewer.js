/* phybench viewer: builds the page from the inline JSON (#viewer-data); no network, no eval.
   Every string from a submission or split is set with textContent, never parsed as markup. */
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("viewer-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const byId = new Map(DATA.videos.map((v, i) => [v.id, Object.assign(v, { order: i })]));
  const NAMES = DATA.models.map((m) => m.name);
  const W = DATA.resolution;
  const T = DATA.frames;
  const CF = DATA.condition_frames;
  const LETTERS = NAMES.map((_, i) => String.fromCharCode(65 + (i % 26)));  // the table's short names: A, B, ...

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("data-")) e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  function svg(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    return e;
  }
  function fmt(x, digits) {
    if (x === null || x === undefined) return "–";
    if (typeof x !== "number") return String(x);
    const a = Math.abs(x);
    if (a !== 0 && (a < 1e-3 || a >= 1e5)) return x.toExponential(2);
    return x.toFixed(digits === undefined ? (a >= 100 ? 1 : 3) : digits);
  }
  function rules(cell) { return [...new Set(cell.findings.map((f) => f.rule))]; }

  /* ------------------------------------------------------------ header */
  function header() {
    const box = document.getElementById("headline");
    DATA.headline.forEach((metrics, i) => {
      const row = el("div", { class: "hl-row" }, el("span", { class: "hl-model", text: NAMES.length > 1 ? `${LETTERS[i]}: ${NAMES[i]}` : NAMES[i] }));
      for (const m of metrics) {
        const ci = m.ci95 ? ` [${fmt(m.ci95[0])}, ${fmt(m.ci95[1])}]` : "";
        const val = m.name === "untrackable" ? `${fmt(100 * (m.value || 0), 1)}% (${m.count})` : fmt(m.value) + ci;
        row.append(el("span", { class: "hl", title: `${m.name}: mean and bootstrap 95% interval over ${m.count ?? "?"} videos` },
          el("span", { class: "hl-label", text: `${m.label} ${m.higher ? "↑" : "↓"}` }), el("span", { class: "hl-value mono", text: val })));
      }
      box.append(row);
    });
    // Per level: one row per model and level, the header's metrics with their intervals (ID against each OOD level).
    if (DATA.levels.some((ls) => ls.length > 1)) {
      const names = DATA.headline[0].map((m) => m.name).filter((n) => n !== "untrackable");
      const head = el("tr", {}, el("th", { scope: "col", text: "model" }), el("th", { scope: "col", text: "level" }),
        el("th", { scope: "col", text: "videos" }), ...names.map((n) => el("th", { scope: "col", text: DATA.headline[0].find((m) => m.name === n).label })));
      const body = el("tbody");
      DATA.levels.forEach((levels, i) => {
        for (const lv of levels) {
          const tr = el("tr", { "data-level": lv.level }, el("td", { text: NAMES.length > 1 ? LETTERS[i] : NAMES[i] }),
            el("td", { text: lv.level }), el("td", { class: "num mono", text: String(lv.videos ?? "") }));
          for (const n of names) {
            const m = lv.metrics.find((x) => x.name === n);
            tr.append(el("td", { class: "num mono", text: m ? fmt(m.value) + (m.ci95 ? ` [${fmt(m.ci95[0])}, ${fmt(m.ci95[1])}]` : "") : "–" }));
          }
          body.append(tr);
        }
      });
      box.append(el("details", { class: "levels", open: true }, el("summary", { text: "Per level (mean [95% interval])" }),
        el("div", { class: "table-wrap" }, el("table", { class: "levels" }, el("thead", {}, head), body))));
    }
    // --board: where this model would rank among the given results files on the same split.
    if (DATA.rank) {
      const r = DATA.rank;
      const body = el("tbody");
      r.rows.forEach((row, i) => {
        body.append(el("tr", { class: `${row.this ? "this" : ""}${row.baseline ? " baseline" : ""}` },
          el("td", { class: "num mono", text: String(i + 1) }), el("td", { text: row.model + (row.baseline ? " (reference baseline)" : "") }),
          el("td", { class: "num mono", text: fmt(row.value) + (row.ci95 ? ` [${fmt(row.ci95[0])}, ${fmt(row.ci95[1])}]` : "") })));
      });
      const title = r.metric ? `Rank ${r.rank} of ${r.rows.length} by ${r.metric} among the results files on this split (${r.files} found)`
        : "No ranked metric in the results";
      box.append(el("details", { class: "rank", id: "rank" }, el("summary", { text: title }),
        el("div", { class: "table-wrap" }, el("table", { class: "rank" }, el("thead", {}, el("tr", {},
          el("th", { scope: "col", text: "#" }), el("th", { scope: "col", text: "model" }), el("th", { scope: "col", text: `${r.metric || ""} (mean [95% interval])` }))), body))));
    }
    const dl = document.getElementById("provenance");
    const items = Object.assign({ task: DATA.task, split: DATA.split, resolution: `${W} px, ${T} frames (${CF} condition)`,
      "results file": DATA.results_file || "(scored here, cheap metrics)", "viewer built by": `phybench ${DATA.phybench_version}` }, DATA.provenance);
    DATA.models.forEach((m, i) => { items[`submission ${i + 1}`] = `${m.name} · ${m.submission_hash}`; });
    for (const [k, v] of Object.entries(items)) {
      if (v === null || v === undefined) continue;
      dl.append(el("dt", { text: k }), el("dd", { class: "mono", text: String(v) }));
    }
  }

  /* ------------------------------------------------------------ gallery */
  function valueOf(v, key, mi) {
    const c = v.cells[mi || 0];
    if (key === "rules") return rules(c).join(", ");
    return c[key];
  }
  function gallery() {
    const box = document.getElementById("gallery");
    if (!DATA.gallery.length) box.append(el("p", { class: "note", text: "No failure: every video is tracked and no judge rule fired." }));
    for (const kind of DATA.gallery) {
      const list = el("div", { class: "g-items" });
      const mi = kind.model || 0;
      const what = kind.kind.replace(/^[A-Z]:/, "");  // a compared model's card: "B:rule:freeze"
      for (const sid of kind.ids) {
        const v = byId.get(sid);
        const cell = v.cells[mi];
        const metric = what.startsWith("rule:") ? `frames ${framesOf(cell, what.slice(5)).slice(0, 6).join(", ")}`
          : what === "untrackable" ? (cell.untrackable || "") : fmt(cell[what]);
        const at = what.startsWith("rule:") ? (framesOf(cell, what.slice(5))[0] ?? T - 1) : T - 1;
        list.append(el("button", { type: "button", class: "g-item", "data-id": sid, onclick: () => openVideo(sid, true) },
          thumb(v, 1 + 2 * mi, inView(v, mi, at)), el("span", { class: "g-text" }, el("span", { class: "sid", text: sid }),
            el("span", { class: "g-val mono", text: `${v.level} · ${metric}` }))));
      }
      box.append(el("div", { class: "g-kind", "data-kind": kind.kind }, el("h3", { text: kind.title }),
        el("p", { class: "note", text: kind.note }), list));
    }
  }
  // The frame nearest t (earlier first) with a body in view in the model's parsed track, else the
  // ground truth's: the last frame, or a rule's first frame, is often empty (a ball that left the
  // view or vanished), and a blank white still says nothing (issue 49).
  function inView(v, mi, t) {
    const m = v.media;
    if (!m) return t;
    const seen = (tracks, f) => (tracks || []).some((tr) => tr && tr[f]);
    for (const tracks of [m.tracks && m.tracks[mi], m.gt]) {
      for (let d = 0; d < T; d++) {
        if (t - d >= 0 && seen(tracks, t - d)) return t - d;
        if (t + d < T && seen(tracks, t + d)) return t + d;
      }
    }
    return t;
  }
  // A still of one panel at frame t, cut from the video's sprite by CSS (no extra file).
  function thumb(v, panel, t, size) {
    const box = el("span", { class: "thumb" });
    const m = v.media;
    if (!m) return box;
    const px = size || 56, k = px / m.w;
    const cols = Math.ceil(T / m.rows);
    box.style.backgroundImage = `url("${m.src}")`;  // CSSOM: allowed by the page's CSP, unlike a style attribute
    box.style.backgroundSize = `${cols * m.panels * m.w * k}px ${m.rows * m.h * k}px`;
    box.style.backgroundPosition = `-${(Math.floor(t / m.rows) * m.panels + panel) * m.w * k}px -${(t % m.rows) * m.h * k}px`;
    box.dataset.frame = String(t);
    return box;
  }
  function framesOf(cell, rule) {
    const out = new Set();
    for (const f of cell.findings) if (f.rule === rule) f.frames.forEach((t) => out.add(t));
    return [...out].sort((a, b) => a - b);
  }

  /* ------------------------------------------------------------ player */
  const player = { video: null, img: null, frame: 0, timer: null, canvases: [], overlays: [] };

  function panelNames() {
    const names = ["Ground truth"];
    NAMES.forEach((n) => names.push(`${n}: generated`, `${n}: difference`));
    return names;
  }

  function openVideo(sid, scroll) {
    const v = byId.get(sid);
    if (!v) return;
    stop();
    player.video = v;
    const root = document.getElementById("player");
    root.dataset.sample = sid;
    document.getElementById("player-title").textContent = `${sid} · ${v.level}`;
    const panels = document.getElementById("panels");
    panels.replaceChildren();
    player.canvases = [];
    player.overlays = [];
    const none = document.getElementById("no-media");
    if (!v.media) {
      none.hidden = false;
      none.textContent = `No media for ${sid}: this viewer has media for ${DATA.media.videos} of ${DATA.media.total} videos ` +
        `(--max-videos ${DATA.media.cap}, --max-mb ${DATA.media.max_bytes / 1e6}); its numbers are in the table.`;
      root.dataset.loaded = "none";
    } else {
      none.hidden = true;
      const m = v.media;
      panels.style.setProperty("--panels", String(m.panels));  // CSSOM, which the CSP allows (no inline style)
      panelNames().slice(0, m.panels).forEach((name, p) => {
        const canvas = el("canvas", { width: m.w, height: m.h });
        const overlay = svg("svg", { viewBox: `0 0 ${W} ${W}`, class: "overlay", "data-panel": p });
        player.canvases.push(canvas);
        player.overlays.push(overlay);
        panels.append(el("figure", { class: "panel", "data-panel": p },
          el("div", { class: "frame" }, canvas, overlay), el("figcaption", { text: name })));
      });
      root.dataset.loaded = "loading";
      const img = new Image();
      img.onload = () => { if (player.img === img) { root.dataset.loaded = "yes"; draw(); } };
      img.onerror = () => { root.dataset.loaded = "error"; };
      player.img = img;
      img.src = m.src;
      drawTracks();
    }
    const slider = document.getElementById("frame");
    slider.max = String(T - 1);
    timeline();
    findings();
    plot();
    setFrame(0);
    for (const tr of document.querySelectorAll("#videos tbody tr")) tr.classList.toggle("current", tr.dataset.id === sid);
    if (scroll) {
      document.getElementById("player-section").scrollIntoView({ block: "start" });
      document.getElementById("link-note").hidden = true;
      try { history.replaceState(null, "", `#v=${encodeURIComponent(sid).replace(/%2F/g, "/")}`); } catch (e) { /* a link to copy, where allowed */ }
    }
  }

  function draw() {
    const v = player.video;
    if (!v || !v.media || !player.img || !player.img.complete) return;
    const m = v.media;
    const t = player.frame;
    const r = t % m.rows, c = Math.floor(t / m.rows);
    player.canvases.forEach((canvas, p) => {
      const ctx = canvas.getContext("2d");
      ctx.imageSmoothingEnabled = false;
      ctx.drawImage(player.img, (c * m.panels + p) * m.w, r * m.h, m.w, m.h, 0, 0, m.w, m.h);
    });
  }

  function pathOf(track) {
    let d = "", pen = false;
    track.forEach((pt) => {
      if (!pt) { pen = false; return; }
      d += `${pen ? "L" : "M"}${pt[0]},${pt[1]} `;
      pen = true;
    });
    return d.trim();
  }

  function drawTracks() {
    const v = player.video, m = v.media;
    player.overlays.forEach((overlay, p) => {
      overlay.replaceChildren();
      const mi = p === 0 ? -1 : Math.floor((p - 1) / 2);  // panel 0: ground truth; then per model generated, difference
      m.gt.forEach((track, k) => {
        overlay.append(svg("path", { d: pathOf(track), class: "track gt", stroke: m.colours[k], "data-body": k, "data-who": "gt" }));
      });
      if (mi >= 0 && m.tracks[mi]) {
        m.tracks[mi].forEach((track, k) => {
          overlay.append(svg("path", { d: pathOf(track), class: "track model", stroke: m.colours[k], "data-body": k, "data-who": "model" }));
        });
      }
      overlay.append(svg("g", { class: "markers" }));
    });
  }

  function markers() {
    const v = player.video;
    if (!v || !v.media) return;
    const m = v.media, t = player.frame;
    player.overlays.forEach((overlay, p) => {
      const g = overlay.querySelector("g.markers");
      g.replaceChildren();
      const mi = p === 0 ? -1 : Math.floor((p - 1) / 2);
      const sets = [["gt", m.gt]];
      if (mi >= 0 && m.tracks[mi]) sets.push(["model", m.tracks[mi]]);
      for (const [who, tracks] of sets) {
        tracks.forEach((track, k) => {
          const pt = track[t];
          if (pt) g.append(svg("circle", { cx: pt[0], cy: pt[1], r: Math.max(1.5, W / 64), class: `marker ${who}`, stroke: m.colours[k] }));
        });
      }
    });
  }

  function setFrame(t) {
    player.frame = Math.max(0, Math.min(T - 1, t));
    document.getElementById("frame").value = String(player.frame);
    const cond = player.frame < CF;
    const label = document.getElementById("frame-label");
    label.textContent = `frame ${player.frame} / ${T - 1}${cond ? " · condition" : ""}`;
    label.classList.toggle("cond", cond);
    document.getElementById("player").dataset.frame = String(player.frame);
    for (const cell of document.querySelectorAll("#timeline .tick")) cell.classList.toggle("now", Number(cell.dataset.t) === player.frame);
    const line = document.querySelector("#plot line.now");
    if (line) { const x = line.dataset.x0 * 1 + player.frame * line.dataset.dx; line.setAttribute("x1", x); line.setAttribute("x2", x); }
    draw();
    markers();
  }

  function stop() {
    if (player.timer) clearInterval(player.timer);
    player.timer = null;
    document.getElementById("play").textContent = "Play";
  }
  function play() {
    if (player.timer) { stop(); return; }
    const speed = Number(document.getElementById("speed").value) / 10;
    const ms = Math.max(15, (1000 * DATA.frame_interval) / speed);
    player.timer = setInterval(() => setFrame((player.frame + 1) % T), ms);
    document.getElementById("play").textContent = "Pause";
  }

  function timeline() {
    const box = document.getElementById("timeline");
    box.replaceChildren();
    const v = player.video;
    const row = (label, cls, marked, title) => {
      const cells = el("div", { class: "ticks" });
      for (let t = 0; t < T; t++) {
        const on = marked(t);
        const cell = el("button", { type: "button", class: `tick${t < CF ? " cond" : ""}${on ? " " + cls : ""}`, "data-t": t,
          title: `frame ${t}${t < CF ? " (condition)" : ""}${on && title ? ": " + title : ""}`, onclick: () => { stop(); setFrame(t); } });
        cells.append(cell);
      }
      box.append(el("div", { class: `tl-row ${cls}` }, el("span", { class: "tl-label", text: label }), cells));
    };
    row("frames", "frames", () => false, "");
    v.cells.forEach((cell, mi) => {
      for (const rule of rules(cell)) {
        const frames = new Set(framesOf(cell, rule));
        const who = NAMES.length > 1 ? `${NAMES[mi]}: ` : "";
        const r = box.childElementCount;
        row(`${who}${rule}`, "fired", (t) => frames.has(t), `judge rule ${rule}`);
        box.children[r].dataset.rule = rule;
        box.children[r].dataset.frames = [...frames].join(",");
      }
    });
  }

  function findings() {
    const box = document.getElementById("findings");
    box.replaceChildren();
    const v = player.video;
    const legend = document.getElementById("legend");
    legend.replaceChildren(el("span", { class: "lg gt", text: "dashed: ground truth's track" }),
      el("span", { class: "lg model", text: "solid: the model's parsed track" }),
      el("span", { class: "lg cond", text: `frames 0–${CF - 1}: condition (given to the model)` }));
    v.cells.forEach((cell, mi) => {
      const bits = [`velocity error ${fmt(cell.velocity_error)}`];
      if (cell.ssim !== undefined) bits.push(`SSIM ${fmt(cell.ssim)}`);
      if (cell.law) bits.push(`law ${cell.law.param}: fit ${fmt(cell.law.fit)}, truth ${fmt(cell.law.truth)}`);
      if (cell.untrackable) bits.push(`untrackable: ${cell.untrackable}`);
      const list = el("ul");
      for (const f of cell.findings) list.append(el("li", {}, el("strong", { text: f.rule }),
        el("span", { text: ` colour ${f.colour}, frames [${f.frames.join(", ")}]: ${f.detail}` })));
      box.append(el("div", { class: "verdict" }, el("h4", { text: `${NAMES[mi]}: ${cell.findings.length ? "abnormal" : (cell.abnormal === 0 ? "judged normal" : "no judge verdict")}` }),
        el("p", { class: "mono", text: bits.join(" · ") }), cell.findings.length ? list : null));
    });
  }

  function plot() {
    const box = document.getElementById("plot");
    box.replaceChildren();
    const v = player.video;
    if (!v.media) return;
    const m = v.media;
    const w = 520, h = 180, L = 40, R = 10, Tp = 10, B = 26;
    const s = svg("svg", { viewBox: `0 0 ${w} ${h}`, class: "pos-plot", role: "img", "aria-label": "position against time" });
    const dx = (w - L - R) / Math.max(1, T - 1);
    const X = (t) => L + t * dx, Y = (p) => Tp + (p / W) * (h - Tp - B);
    s.append(svg("rect", { x: L, y: Tp, width: X(CF - 1) - L, height: h - Tp - B, class: "cond-band" }));
    s.append(svg("rect", { x: L, y: Tp, width: w - L - R, height: h - Tp - B, class: "frame-box" }));
    // The lines in a nested <svg> over the plot area: it clips them (a ball leaving the view runs off the axis).
    const area = svg("svg", { x: L, y: Tp, width: w - L - R, height: h - Tp - B, viewBox: `${L} ${Tp} ${w - L - R} ${h - Tp - B}` });
    const lines = [["gt", m.gt]];
    m.tracks.forEach((tr, mi) => { if (tr) lines.push([`model m${mi}`, tr]); });
    for (const [who, tracks] of lines) {
      tracks.forEach((track, k) => {
        for (const axis of [0, 1]) {
          const pts = track.map((pt, t) => (pt ? [X(t), Y(pt[axis])] : null));
          let d = "", pen = false;
          pts.forEach((pt) => { if (!pt) { pen = false; return; } d += `${pen ? "L" : "M"}${pt[0].toFixed(1)},${pt[1].toFixed(1)} `; pen = true; });
          area.append(svg("path", { d: d.trim(), class: `pline ${who} ${axis ? "y" : "x"}`, stroke: m.colours[k] }));
        }
      });
    }
    s.append(area);
    const now = svg("line", { x1: X(0), x2: X(0), y1: Tp, y2: h - B, class: "now", "data-x0": L, "data-dx": dx });
    s.append(now);
    const lab = (x, y, text, anchor) => { const t = svg("text", { x, y, "text-anchor": anchor || "middle" }); t.textContent = text; s.append(t); };
    lab(L, h - 8, "0", "start"); lab(w - R, h - 8, String(T - 1), "end"); lab((L + w - R) / 2, h - 8, "frame");
    lab(L - 4, Tp + 8, "0", "end"); lab(L - 4, h - B, `${W}`, "end");
    box.append(el("p", { class: "note", text: "Position (px) against frame: thick x, thin y; dashed ground truth, solid the model; shaded: condition frames." }), s);
  }

  /* ------------------------------------------------------------ table */
  const columns = [{ key: "id", label: "id", get: (v) => v.id, text: true }, { key: "level", label: "level", get: (v) => v.level, text: true }];
  const params = [...new Set(DATA.videos.flatMap((v) => Object.keys(v.params)))].filter((p) => ["radius", "velocity", "velocity_1", "restitution", "gravity"].includes(p));
  for (const p of params) columns.push({ key: `p:${p}`, label: p, get: (v) => v.params[p] });
  DATA.models.forEach((m, mi) => {
    const who = NAMES.length > 1 ? `${LETTERS[mi]} ` : "";
    for (const metric of DATA.metrics) columns.push({ key: `${mi}:${metric}`, label: who + metric, get: (v) => v.cells[mi][metric] });
    columns.push({ key: `${mi}:verdict`, label: `${who}judge`, text: true,
      get: (v) => (rules(v.cells[mi]).join(", ") || (v.cells[mi].untrackable ? "untrackable" : (v.cells[mi].abnormal === 0 ? "ok" : ""))) });
    columns.push({ key: `${mi}:law`, label: `${who}law fit (truth)`, get: (v) => (v.cells[mi].law ? v.cells[mi].law.fit : null),
      show: (v) => (v.cells[mi].law ? `${fmt(v.cells[mi].law.fit)} (${fmt(v.cells[mi].law.truth)})` : "–") });
  });
  const sort = { key: "order", dir: 1 };

  function tableHead() {
    const tr = el("tr");
    for (const c of columns) {
      tr.append(el("th", { "data-key": c.key, scope: "col" },
        el("button", { type: "button", text: c.label, onclick: () => { sort.dir = sort.key === c.key ? -sort.dir : 1; sort.key = c.key; tableBody(); } })));
    }
    document.querySelector("#videos thead").replaceChildren(tr);
  }
  function cmp(a, b) {
    if (sort.key === "order") return a.order - b.order;
    const c = columns.find((x) => x.key === sort.key);
    const x = c.get(a), y = c.get(b);
    const nx = x === null || x === undefined || x === "", ny = y === null || y === undefined || y === "";
    if (nx || ny) return nx === ny ? a.order - b.order : (nx ? 1 : -1);  // blanks last, either direction
    const r = c.text ? String(x).localeCompare(String(y)) : x - y;
    return sort.dir * r || a.order - b.order;
  }
  function visible(v) {
    const q = document.getElementById("filter").value.trim().toLowerCase();
    const only = document.getElementById("only").value;
    if (only === "abnormal" && !v.cells.some((c) => c.findings.length)) return false;
    if (only === "untrackable" && !v.cells.some((c) => c.untrackable)) return false;
    if (only === "media" && !v.media) return false;
    if (!q) return true;
    const hay = [v.id, v.level, ...v.cells.flatMap((c) => rules(c)), ...v.cells.map((c) => c.untrackable || "")].join(" ").toLowerCase();
    return q.split(/\s+/).every((w) => hay.includes(w));
  }
  function tableBody() {
    const rows = DATA.videos.filter(visible).sort(cmp);
    const body = document.querySelector("#videos tbody");
    body.replaceChildren(...rows.map((v) => {
      const tr = el("tr", { "data-id": v.id, class: `${v.media ? "has-media" : "no-media"}${player.video === v ? " current" : ""}`,
        tabIndex: 0, onclick: () => openVideo(v.id, true), onkeydown: (e) => { if (e.key === "Enter") openVideo(v.id, true); } });
      for (const c of columns) {
        const x = c.get(v);
        tr.append(el("td", { class: c.text ? "" : "num mono", "data-value": x === null || x === undefined ? "" : String(x),
          text: c.show ? c.show(v) : (c.text ? String(x ?? "") : fmt(x)) }));
      }
      return tr;
    }));
    for (const th of document.querySelectorAll("#videos th")) th.dataset.sorted = th.dataset.key === sort.key ? (sort.dir > 0 ? "asc" : "desc") : "";
    document.getElementById("count").textContent = `${rows.length} of ${DATA.videos.length} videos`;
  }

  /* ------------------------------------------------------------ compare */
  function compare() {
    if (!DATA.compare.length) return;
    document.getElementById("compare-section").hidden = false;
    const box = document.getElementById("compare");
    for (const comp of DATA.compare) {
      const table = el("table", { class: "compare" });
      table.append(el("thead", {}, el("tr", {}, ...["id", "level", `${comp.a}`, `${comp.b}`, "|difference|"].map((t) => el("th", { scope: "col", text: t })))));
      const body = el("tbody");
      for (const r of comp.rows.slice(0, 50)) {
        body.append(el("tr", { "data-id": r.id, "data-diff": r.diff, tabIndex: 0, onclick: () => openVideo(r.id, true) },
          el("td", { text: r.id }), el("td", { text: byId.get(r.id).level }), el("td", { class: "num mono", text: fmt(r.a) }),
          el("td", { class: "num mono", text: fmt(r.b) }), el("td", { class: "num mono", text: fmt(r.diff) })));
      }
      table.append(body);
      const one = comp.one_sided.length ? el("p", { class: "note", text: `Tracked by only one of the two: ${comp.one_sided.slice(0, 20).join(", ")}${comp.one_sided.length > 20 ? " …" : ""}` }) : null;
      box.append(el("div", { class: "cmp", "data-a": comp.a, "data-b": comp.b },
        el("h3", { text: `${comp.a} vs ${comp.b}: ${comp.metric}, largest difference first` }), el("div", { class: "table-wrap" }, table), one));
    }
  }

  /* ------------------------------------------------------------ plots */
  const COLOURS = ["#4269d0", "#ff725c", "#3ca951", "#a463f2", "#efb118", "#9c6b4e"];
  function text(s, x, y, t, anchor) { const e = svg("text", { x, y, "text-anchor": anchor || "middle" }); e.textContent = t; s.append(e); }

  // Per level: the ranked metric's mean and 95% interval, per model (a model that learned the law stays flat).
  function levelPlot() {
    const levels = DATA.levels[0].map((l) => l.level);
    if (levels.length < 2) return null;
    const name = ["velocity_error_ranked", "velocity_error"].find((n) => DATA.headline[0].some((m) => m.name === n));
    if (!name) return null;
    const pts = DATA.levels.map((ls) => ls.map((l) => l.metrics.find((m) => m.name === name)).map((m) => (m && m.value !== null ? m : null)));
    const vals = pts.flat().filter(Boolean).flatMap((m) => [m.value, ...(m.ci95 || [])]).filter((v) => v !== null && v > 0);
    if (!vals.length) return null;
    const lo = Math.log10(Math.min(...vals)), hi = Math.log10(Math.max(...vals)) + 1e-9;
    const w = 360, h = 200, L = 50, R = 10, Tp = 10, B = 30;
    const s = svg("svg", { viewBox: `0 0 ${w} ${h}`, class: "mini-plot", id: "level-plot", role: "img", "aria-label": `${name} per level` });
    const X = (i) => L + (i + 0.5) * (w - L - R) / levels.length;
    const Y = (v) => Tp + (h - Tp - B) * (1 - (Math.log10(Math.max(v, 10 ** lo)) - lo) / Math.max(hi - lo, 1e-9));
    s.append(svg("rect", { x: L, y: Tp, width: w - L - R, height: h - Tp - B, class: "frame-box" }));
    levels.forEach((lv, i) => text(s, X(i), h - 12, lv));
    text(s, L - 4, Tp + 8, fmt(10 ** hi, 2), "end"); text(s, L - 4, h - B, fmt(10 ** lo, 2), "end");
    pts.forEach((series, mi) => {
      const c = COLOURS[mi % COLOURS.length], dx = (mi - (pts.length - 1) / 2) * 6;
      let d = "";
      series.forEach((m, i) => {
        if (!m) return;
        if (m.ci95 && m.ci95[0] !== null && m.ci95[1] !== null) s.append(svg("line", { x1: X(i) + dx, x2: X(i) + dx, y1: Y(m.ci95[0]), y2: Y(m.ci95[1]), stroke: c, class: "ci" }));
        s.append(svg("circle", { cx: X(i) + dx, cy: Y(m.value), r: 3.5, fill: c, "data-level": levels[i], "data-model": mi }));
        d += `${d ? "L" : "M"}${(X(i) + dx).toFixed(1)},${Y(m.value).toFixed(1)} `;
      });
      s.append(svg("path", { d: d.trim(), stroke: c, class: "series" }));
    });
    return figure(s, `${name} per level (log scale; mean and 95% interval)${NAMES.length > 1 ? ": " + NAMES.map((n, i) => `${LETTERS[i]} ${COLOURS[i % COLOURS.length]}`).join(", ") : ""}`);
  }

  // The learned law: each video's fitted parameter against the ground truth's fit of the same scene; a point opens the video.
  function lawPlot() {
    const pts = [];
    DATA.videos.forEach((v) => v.cells.forEach((c, mi) => {
      if (c.law && c.law.fit !== null && c.law.truth !== null) pts.push([c.law.truth, c.law.fit, v.id, mi, c.law.param]);
    }));
    if (pts.length < 2) return null;
    const xs = pts.map((p) => p[0]).sort((a, b) => a - b);
    const q = (f) => xs[Math.min(xs.length - 1, Math.max(0, Math.round(f * (xs.length - 1))))];
    const span = Math.max(q(1) - q(0), 1e-9);
    const lo = q(0) - 0.5 * span, hi = q(1) + 0.5 * span;  // the truth's range, widened: fits beyond it are clipped to the edge
    const w = 300, h = 300, L = 50, R = 10, Tp = 10, B = 30;
    const s = svg("svg", { viewBox: `0 0 ${w} ${h}`, class: "mini-plot", id: "law-plot", role: "img", "aria-label": "fitted against true law parameter" });
    const X = (v) => L + (w - L - R) * (v - lo) / (hi - lo);
    const Y = (v) => Tp + (h - Tp - B) * (1 - (v - lo) / (hi - lo));
    const clip = (v) => Math.min(hi, Math.max(lo, v));
    s.append(svg("rect", { x: L, y: Tp, width: w - L - R, height: h - Tp - B, class: "frame-box" }));
    s.append(svg("line", { x1: X(lo), y1: Y(lo), x2: X(hi), y2: Y(hi), class: "diag" }));
    for (const [truth, fit, sid, mi, param] of pts) {
      const out = fit < lo || fit > hi;
      const dot = svg("circle", { cx: X(truth), cy: Y(clip(fit)), r: 3, fill: COLOURS[mi % COLOURS.length], class: `pt${out ? " clipped" : ""}`, "data-id": sid });
      const title = svg("title", {});
      title.textContent = `${sid} (${NAMES[mi]}): ${param} fit ${fmt(fit)}, truth ${fmt(truth)}${out ? " (off the plot)" : ""}`;
      dot.append(title);
      dot.addEventListener("click", () => openVideo(sid, true));
      s.append(dot);
    }
    text(s, (L + w - R) / 2, h - 6, `true ${pts[0][4]}`);
    text(s, L - 4, Tp + 8, fmt(hi, 2), "end"); text(s, L - 4, h - B, fmt(lo, 2), "end");
    return figure(s, "Learned law: each video's fitted parameter (y) against the ground truth's fit (x); on the diagonal the model follows the law; hollow points are off the plot; click one to play it.");
  }

  function figure(s, caption) { return el("figure", { class: "plot-card" }, s, el("figcaption", { text: caption })); }

  function plots() {
    const figs = [levelPlot(), lawPlot()].filter(Boolean);
    if (!figs.length) return;
    document.getElementById("plots-section").hidden = false;
    document.getElementById("plots").append(...figs);
  }

  /* ------------------------------------------------------------ deep links: index.html#v=<sample id> */
  // The board's scatter dots open one video here (phybench/leaderboard/deep_links.py); the id is
  // percent-encoded in the URL, looked up in a Map (never a property name) and shown as text only.
  const linkNote = el("p", { id: "link-note", class: "note link-note", role: "status", hidden: true });
  document.getElementById("player-section").insertBefore(linkNote, document.getElementById("player"));
  function followLink() {
    const m = /^#v=(.*)$/s.exec(location.hash);
    if (!m) return false;
    let sid = m[1];
    try { sid = decodeURIComponent(sid); } catch (e) { /* malformed escapes: looked up as written */ }
    if (!byId.has(sid)) {
      linkNote.hidden = false;
      linkNote.textContent = `The link names the video "${sid.length > 120 ? sid.slice(0, 119) + "…" : sid}", which is not ` +
        `in this viewer (${DATA.videos.length} videos of ${DATA.task} ${DATA.split}).`;
      document.getElementById("player-section").scrollIntoView({ block: "start" });
      return false;
    }
    linkNote.hidden = true;
    openVideo(sid, true);
    return true;
  }

  /* ------------------------------------------------------------ start */
  header();
  plots();
  gallery();
  compare();
  tableHead();
  tableBody();
  const media = DATA.media;
  document.getElementById("media-note").textContent = media.videos < media.total
    ? `Media for ${media.videos} of ${media.total} videos (capped by --max-videos ${media.cap} and --max-mb ${media.max_bytes / 1e6}: the gallery's first); every video's numbers are in the table. Click a row to play it.`
    : `Media for all ${media.total} videos (${(media.bytes / 1e6).toFixed(1)} MB). Click a row to play it.`;
  document.getElementById("filter").addEventListener("input", tableBody);
  document.getElementById("only").addEventListener("change", tableBody);
  document.getElementById("play").addEventListener("click", play);
  document.getElementById("player").addEventListener("keydown", (e) => {  // ←/→ a frame, space plays or pauses
    if (e.target.closest("select, input[type=checkbox]")) return;
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") { stop(); setFrame(player.frame + (e.key === "ArrowRight" ? 1 : -1)); e.preventDefault(); }
    else if (e.key === " " && e.target.tagName !== "BUTTON") { play(); e.preventDefault(); }
  });
  document.getElementById("frame").addEventListener("input", (e) => { stop(); setFrame(Number(e.target.value)); });
  document.getElementById("speed").addEventListener("change", () => { if (player.timer) { stop(); play(); } });
  document.getElementById("show-tracks").addEventListener("change", (e) => document.getElementById("player").classList.toggle("no-tracks", !e.target.checked));
  const first = (DATA.gallery[0] && DATA.gallery[0].ids[0]) || (DATA.videos.find((v) => v.media) || DATA.videos[0] || {}).id;
  if (!followLink() && first) openVideo(first, false);
  window.addEventListener("hashchange", followLink);
})();

/* phybench leaderboard: draws the task tables from the JSON embedded in index.html.
 *
 * Plain script, no dependencies, no network: it works opened from file://.  Text from
 * submissions (model names, notes) is only ever set with textContent or as attribute
 * values, never parsed as HTML.  Number formatting mirrors `fmt` in phybench/leaderboard.py.
 */
(function () {
  "use strict";

  var DATA = JSON.parse(document.getElementById("phybench-data").textContent);
  // On a phone the explanations fold under one line, so the first screen shows the tables, not prose
  // (they stay open on a wide screen, where the summary line is hidden).
  if (window.matchMedia && window.matchMedia("(max-width: 640px)").matches) {
    Array.prototype.forEach.call(document.querySelectorAll("details.explainer-fold"), function (d) { d.open = false; });
  }
  var WARN_RATE = 0.05; // untrackable share worth a second look
  // The fields describing a model: phybench.scoring.model_fields.MODEL_FIELDS, serialised into the page.
  var MODEL_FIELDS = DATA.model_fields || [];

  function fieldsShown(show) {
    return MODEL_FIELDS.filter(function (f) { return f.show === show; });
  }

  function fieldText(field, value) {
    if (Array.isArray(value)) return value.join(", ");
    if (field.style === "count" && typeof value === "number") return paramsText(value);
    return String(value);
  }

  function absent(value) {
    return value === undefined || value === null || value === "";
  }

  function fmt(x) {
    if (x === null || x === undefined) return "–";
    if (x === 0) return "0";
    if (Math.abs(x) >= 100) return x.toFixed(1);
    return String(Number(x.toPrecision(3)));
  }

  function pct(x) {
    if (x === 0) return "0%";
    return (100 * x).toFixed(x < 0.001 ? 2 : 1) + "%";
  }

  function h(tag, props, children) {
    var node = document.createElement(tag);
    Object.keys(props || {}).forEach(function (key) {
      var value = props[key];
      if (value === null || value === undefined || value === false) return;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    });
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function metricOf(board, name) {
    return board.metrics.filter(function (m) { return m.name === name; })[0];
  }

  function entryOf(row, level, metric) {
    var cell = row.cells[level];
    var e = cell && cell.metrics ? cell.metrics[metric] || null : null;
    // site.py `_packed`: a one-run mean travels as [mean, ci low, ci high, count]
    return Array.isArray(e) ? { mean: e[0], ci95: [e[1], e[2]], count: e[3] } : e;
  }

  function valueOf(row, level, metric) {
    var entry = entryOf(row, level, metric);
    if (!entry) return null;
    var v = entry.value !== undefined ? entry.value : entry.mean;
    return typeof v === "number" ? v : null;
  }

  function paramsText(p) {
    var units = [[1e9, "B"], [1e6, "M"], [1e3, "k"]];
    for (var i = 0; i < units.length; i++) {
      if (p >= units[i][0]) return String(Number((p / units[i][0]).toPrecision(3))) + units[i][1];
    }
    return String(p);
  }

  function short(hash) {
    return typeof hash === "string" ? hash.slice(0, 12) : "–";
  }

  // ------------------------------------------------------------------ the OOD / ID gap (phybench/leaderboard/gap.py)
  var GAP = "gap"; // the gap column's sort key

  function gapOf(row, metric) {
    return row.gap && row.gap[metric] ? row.gap[metric] : null;
  }

  function sortValue(row, key, metric) {
    if (key === GAP) { var g = gapOf(row, metric); return g ? g.ratio : null; }
    return valueOf(row, key, metric);
  }

  function gapCell(board, row, metric) {
    var g = gapOf(row, metric.name);
    if (!g) return h("td", { class: "num gap empty", text: "–" });
    var parts = [h("span", { class: "mean", text: "×" + fmt(g.ratio) })];
    if (g.runs && typeof g.runs.sd === "number") {
      parts.push(h("span", { class: "runs-sd", text: " ± " + fmt(g.runs.sd),
        title: "standard deviation of the per-seed ratios across " + g.runs.n + " seeds" }));
    }
    if (typeof g.ci95[0] === "number" && typeof g.ci95[1] === "number") {
      parts.push(h("span", { class: "ci", text: fmt(g.ci95[0]) + "–" + fmt(g.ci95[1]), title: "95% interval of the ratio" }));
    }
    return h("td", { class: "num gap", "data-value": String(g.ratio), title: board.gap.label + " of " + metric.label.toLowerCase() +
      ": " + board.gap.method }, parts);
  }

  // ------------------------------------------------------------------ SVG plots drawn here
  var SVGNS = "http://www.w3.org/2000/svg";
  var MAX_LINES = 12; // models in a by-level plot (site.py BY_LEVEL_LINES)

  function s(tag, attrs, children) {
    var node = document.createElementNS(SVGNS, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    (children || []).forEach(function (c) { node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return node;
  }

  function linTicks(lo, hi) {
    var raw = (hi - lo) / 5, step = Math.pow(10, Math.floor(Math.log10(raw)));
    var fs = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < fs.length; i++) { if (raw <= fs[i] * step) { step *= fs[i]; break; } }
    var first = Math.ceil(lo / step) * step, out = [];
    for (var t = 0; first + t * step <= hi + 1e-9 * step; t++) out.push(Number((first + t * step).toPrecision(10)));
    return out;
  }

  // (lo, hi, map, ticks, "log" | "linear"), as svg.py axis_scale: log when every value is positive.
  function axisScale(values, y0, y1) {
    var lo, hi, ticks;
    if (values.length && Math.min.apply(null, values) > 0) {
      lo = Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, values)) * 4) / 4);
      hi = Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, values)) * 4) / 4);
      if (hi <= lo) hi = lo * 10;
      var a = Math.floor(Math.log10(lo)), b = Math.ceil(Math.log10(hi));
      ticks = [];
      for (var k = a; k <= b; k++) {
        (b - a <= 2 ? [1, 2, 5] : [1]).forEach(function (f) { ticks.push(f * Math.pow(10, k)); });
      }
      ticks = ticks.filter(function (t) { return lo * 0.999 <= t && t <= hi * 1.001; });
      return { lo: lo, hi: hi, ticks: ticks, scale: "log", map: function (v) {
        return y1 - (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) * (y1 - y0);
      } };
    }
    lo = values.length ? Math.min.apply(null, values) : 0;
    hi = values.length ? Math.max.apply(null, values) : 1;
    if (hi <= lo) { lo -= 0.5; hi += 0.5; }
    ticks = linTicks(lo, hi);
    lo = Math.min(lo, ticks[0]);
    hi = Math.max(hi, ticks[ticks.length - 1]);
    return { lo: lo, hi: hi, ticks: ticks, scale: "linear", map: function (v) { return y1 - (v - lo) / (hi - lo) * (y1 - y0); } };
  }

  function shortName(text, n) { return text.length <= n ? text : text.slice(0, n - 1) + "…"; }

  // A metric by level (ID, then each OOD level), one line per model: mean and 95% interval
  // (plots.py drew it before; drawn here from the table's data so the page carries it once).
  function byLevelPlot(board, metric, rows, colours) {
    var levels = board.levels.filter(function (c) { return c.key !== "ood-overall"; });
    var series = [];
    rows.forEach(function (row) {
      var pts = [];
      levels.forEach(function (level, i) {
        var e = entryOf(row, level.key, metric.name), v = valueOf(row, level.key, metric.name);
        if (v === null) return;
        var ci = e.ci95 || [null, null];
        pts.push([i, v, typeof ci[0] === "number" ? ci[0] : null, typeof ci[1] === "number" ? ci[1] : null]);
      });
      if (pts.length) series.push([row.model, pts]);
    });
    if (!series.length || !levels.length) return null;
    var W = 780, H = Math.max(320, 60 + 18 * series.length), x0 = 64, x1 = W - 200, y0 = 16, y1 = H - 40;
    var values = [];
    series.forEach(function (sr) { sr[1].forEach(function (p) { [p[1], p[2], p[3]].forEach(function (v) { if (v !== null) values.push(v); }); }); });
    var ax = axisScale(values, y0, y1);
    var svg = s("svg", { class: "plot", viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img",
      "aria-label": metric.label + " by level, " + board.title });
    ax.ticks.forEach(function (t) {
      svg.appendChild(s("line", { class: "grid", x1: x0, x2: x1, y1: ax.map(t).toFixed(1), y2: ax.map(t).toFixed(1) }));
      svg.appendChild(s("text", { class: "tick", x: x0 - 6, y: (ax.map(t) + 4).toFixed(1), "text-anchor": "end" }, [fmt(t)]));
    });
    var cy = ((y0 + y1) / 2).toFixed(1);
    svg.appendChild(s("text", { class: "axis-label", x: 14, y: cy, "text-anchor": "middle", transform: "rotate(-90 14 " + cy + ")" },
      [metric.label + " (" + (metric.unit ? metric.unit + ", " : "") + ax.scale + ")"]));
    var band = (x1 - x0) / levels.length;
    levels.forEach(function (level, i) {
      svg.appendChild(s("text", { class: "tick", x: (x0 + band * (i + 0.5)).toFixed(1), y: y1 + 22, "text-anchor": "middle" },
        [s("title", {}, [level.title || level.label]), level.label]));
    });
    svg.appendChild(s("line", { class: "axis", x1: x0, x2: x0, y1: y0, y2: y1 }));
    svg.appendChild(s("line", { class: "axis", x1: x0, x2: x1, y1: y1, y2: y1 }));
    var dodge = Math.min(8, band / (series.length + 2));
    series.forEach(function (sr, k) {
      var colour = colours[sr[0]] || "#888", off = (k - (series.length - 1) / 2) * dodge;
      var g = s("g", { class: "series", "data-model": sr[0] }, [s("title", {}, [sr[0]])]);
      var xy = sr[1].map(function (p) { return [x0 + band * (p[0] + 0.5) + off, ax.map(p[1])]; });
      if (xy.length > 1) {
        g.appendChild(s("polyline", { points: xy.map(function (q) { return q[0].toFixed(1) + "," + q[1].toFixed(1); }).join(" "),
          fill: "none", stroke: colour, "stroke-width": 1.5, "stroke-opacity": 0.55 }));
      }
      sr[1].forEach(function (p, j) {
        var x = xy[j][0].toFixed(1);
        if (p[2] !== null && p[3] !== null) {
          g.appendChild(s("line", { x1: x, x2: x, y1: ax.map(p[2]).toFixed(1), y2: ax.map(p[3]).toFixed(1), stroke: colour, "stroke-width": 1.5 }));
        }
        var tip = sr[0] + " · " + levels[p[0]].label + ": " + fmt(p[1]) + (p[2] !== null ? " [" + fmt(p[2]) + ", " + fmt(p[3]) + "]" : "");
        g.appendChild(s("circle", { cx: x, cy: xy[j][1].toFixed(1), r: 4, fill: colour, stroke: colour,
          "fill-opacity": p[1] < ax.lo ? 0 : 1 }, [s("title", {}, [tip])]));
      });
      svg.appendChild(g);
      var ly = y0 + 8 + 18 * k, lx = x1 + 18;
      svg.appendChild(s("g", { class: "legend-item" }, [s("title", {}, [sr[0]]),
        s("line", { x1: lx, x2: lx + 18, y1: ly, y2: ly, stroke: colour, "stroke-width": 2 }),
        s("circle", { cx: lx + 9, cy: ly, r: 3.5, fill: colour }),
        s("text", { class: "legend", x: lx + 24, y: ly + 4 }, [shortName(sr[0], 26)])]));
    });
    return svg;
  }

  // ------------------------------------------------------------------ table cells
  // A model name with a line-break opportunity after each _ . / (a hyphen is one already), so a
  // narrow column wraps it between its parts, never inside a word: text nodes and <wbr> only.
  function nameParts(name) {
    var out = [];
    String(name).split(/([_./])/).forEach(function (part, i) {
      if (!part) return;
      out.push(part);
      if (i % 2 === 1) out.push(h("wbr", {}));
    });
    return out;
  }

  function modelCell(row, detailsId) {
    var meta = row.meta || {};
    var bits = fieldsShown("summary").filter(function (f) { return !absent(meta[f.key]); }).map(function (f) {
      return f.text.replace("{}", fieldText(f, meta[f.key]));
    });
    // A debugging subset (--limit N) is flagged; the official lite protocol is labelled as such.
    var partial = row.sources.filter(function (s) {
      var p = s.provenance;
      return s.protocol !== "lite" && s.protocol !== "full" && typeof p.split_num_samples === "number" &&
        typeof p.split_full_size === "number" && p.split_num_samples < p.split_full_size;
    });
    var lite = row.sources.filter(function (s) { return s.protocol === "lite"; });
    var toggle = h("button", {
      type: "button", class: "toggle", "aria-expanded": "false", "aria-controls": detailsId,
      title: "provenance: versions and hashes",
    }, [h("span", { class: "caret", "aria-hidden": "true", text: "▸" }), " provenance"]);
    var children = [h("div", { class: "name" }, nameParts(row.model))];
    if (bits.length) children.push(h("div", { class: "meta", text: bits.join(" · ") }));
    var v = row.verification || { verified: false, text: "self-reported" };
    children.push(h("span", {
      class: v.verified ? "badge verified" : "badge self",
      text: v.verified ? "verified" : (v.needs_seeds ? v.text : "self-reported"),
      title: v.text,
    }));
    if (typeof row.runs === "number" && row.runs > 1) {
      children.push(h("span", { class: "badge runs", text: row.runs + " runs",
        title: "independent runs (seeds): each cell is the mean over runs ± their standard deviation" }));
    }
    if (lite.length) {
      children.push(h("span", {
        class: "badge official", text: "lite protocol",
        title: "the official lite protocol: " + lite.map(function (s) {
          return s.split + ": " + s.provenance.split_num_samples + " of " + s.provenance.split_full_size + " samples";
        }).join("; "),
      }));
    }
    if (partial.length) {
      children.push(h("span", {
        class: "badge", text: "subset",
        title: partial.map(function (s) {
          return s.split + ": " + s.provenance.split_num_samples + " of " + s.provenance.split_full_size + " samples";
        }).join("; "),
      }));
    }
    if (v.text !== "self-reported" && !v.needs_seeds) children.push(h("div", { class: "verification", text: v.text }));
    fieldsShown("badge").forEach(function (f) {
      if (!absent(meta[f.key])) children.push(h("span", { class: "badge", text: f.label, title: fieldText(f, meta[f.key]) }));
    });
    if (row.viewers && row.viewers.length) children.push(viewerLinks(row.viewers));
    children.push(toggle);
    return h("td", { class: "model" }, children);
  }

  // A row's viewers (phybench view folders under viewers/, board_viewers.py): one link per split.
  function viewerLinks(viewers) {
    var links = [h("span", { text: "watch: " })];
    viewers.forEach(function (v, i) {
      if (i) links.push(" · ");
      links.push(h("a", { class: "viewer-link", href: v.href, text: v.split,
        title: "every video of " + v.file + " beside its ground truth" }));
    });
    return h("div", { class: "viewers" }, links);
  }

  // The paired comparison (paired.py): "≈" where a row cannot be told from the row ranked just above it.
  function pairedMark(row, level, metric) {
    var m = row.paired && row.paired[level.key];
    if (!m || m.metric !== metric.name || !m.same) return null;
    return h("span", { class: "paired-same", text: " ≈",
      title: "statistically indistinguishable from " + m.above + ", ranked just above in this column: paired " +
        "bootstrap over the same " + m.n + " videos, difference " + fmt(m.diff) + ", 95% interval " +
        fmt(m.ci95[0]) + " to " + fmt(m.ci95[1]) });
  }

  function valueCell(row, level, metric) {
    var entry = entryOf(row, level.key, metric.name);
    var cell = row.cells[level.key];
    if (!entry) return h("td", { class: "num empty", text: "–" });
    var v = valueOf(row, level.key, metric.name);
    var parts = [pairedMark(row, level, metric), h("span", { class: "mean", text: fmt(v) })];  // the mark floats right of the mean
    if (entry.runs && typeof entry.runs.sd === "number") {
      parts.push(h("span", { class: "runs-sd", text: " ± " + fmt(entry.runs.sd),
        title: "standard deviation of the mean across " + entry.runs.n + " runs" }));
    }
    var sub = [];
    if (entry.ci95 && typeof entry.ci95[0] === "number" && typeof entry.ci95[1] === "number") {
      parts.push(h("span", { class: "ci", text: fmt(entry.ci95[0]) + "–" + fmt(entry.ci95[1]), title: "bootstrap 95% interval of the mean" }));
    }
    if (entry.value !== undefined) {
      if (typeof entry.videos === "number") sub.push("N " + entry.videos);
      if (typeof entry.frames === "number") sub.push(entry.frames + " frames");
    } else if (typeof entry.count === "number") {
      sub.push("n " + entry.count);
    }
    if (entry.runs) sub.push(entry.runs.n + " runs");
    var rate = cell && cell.untrackable ? cell.untrackable.rate : null;
    var subNode = h("span", { class: "sub" }, [sub.join(" · ")]);
    if (typeof rate === "number") {
      if (sub.length) subNode.appendChild(document.createTextNode(" · "));
      subNode.appendChild(h("span", {
        class: rate >= WARN_RATE ? "untrackable warn" : "untrackable",
        text: pct(rate) + " untr.",
        title: (typeof cell.untrackable.count === "number" && typeof cell.videos === "number"
          ? cell.untrackable.count + " of " + cell.videos + " videos" : "videos") + " untrackable (left out of the mean)",
      }));
    }
    parts.push(subNode);
    return h("td", { class: "num", "data-value": v === null ? "" : String(v) }, parts);
  }

  // ------------------------------------------------------------------ provenance
  function definition(list, term, value, code) {
    list.appendChild(h("dt", { text: term }));
    list.appendChild(h("dd", {}, [code ? h("code", { text: String(value) }) : String(value)]));
  }

  function sourceCard(source) {
    var p = source.provenance;
    var dl = h("dl", {});
    definition(dl, "verification", source.verification || "self-reported");
    if (typeof source.run === "number") definition(dl, "run", String(source.run));
    definition(dl, "phybench", p.phybench_version || "–");
    definition(dl, "task spec hash", p.task_spec_hash || "–", true);
    definition(dl, "split hash", p.split_hash || "–", true);
    if (typeof p.split_num_samples === "number") {
      definition(dl, "samples", p.split_num_samples + (typeof p.split_full_size === "number" ? " of " + p.split_full_size : ""));
    }
    definition(dl, "submission hash", p.submission_hash || "–", true);
    var weights = p.weights && Object.keys(p.weights).length ? Object.keys(p.weights).sort().map(function (k) {
      return k + " " + p.weights[k];
    }).join(", ") : "none (no LPIPS or FVD)";
    definition(dl, "weights", weights, !!(p.weights && Object.keys(p.weights).length));
    definition(dl, "frames", (p.resolution || "?") + " px" + (p.pixel_mapping ? ", " + p.pixel_mapping + " mapping" : ""));
    definition(dl, "untrackable", String(source.untrackable) + " video" + (source.untrackable === 1 ? "" : "s"));
    var m = source.model || {};
    fieldsShown("details").forEach(function (f) {
      var value = m[f.key];
      if (absent(value)) return;
      if (f.style === "link") {
        dl.appendChild(h("dt", { text: f.label }));
        var dd = h("dd", {});
        var url = String(value);
        if (/^https?:\/\//i.test(url)) dd.appendChild(h("a", { href: url, rel: "noopener noreferrer nofollow", text: url }));
        else dd.textContent = url;
        dl.appendChild(dd);
        return;
      }
      definition(dl, f.label, fieldText(f, value), f.style === "code");
    });
    var card = h("div", { class: "source" }, [
      h("h4", {}, [h("span", { class: "split", text: source.split }), " ", h("code", { text: source.file })]),
      dl,
    ]);
    if (source.warnings && source.warnings.length) {
      card.appendChild(h("ul", { class: "warnings" }, source.warnings.map(function (w) { return h("li", { text: w }); })));
    }
    return card;
  }

  // ------------------------------------------------------------------ one board
  function Board(board, section) {
    this.board = board;
    this.table = section.querySelector("table.lb");
    this.select = section.querySelector("select.metric-select");
    this.metric = board.initial_metric && metricOf(board, board.initial_metric) ? board.initial_metric :
      metricOf(board, DATA.primary_metric) ? DATA.primary_metric : (board.metrics[0] || {}).name;
    this.sortKey = board.levels.length ? board.levels[0].key : "model";
    this.sortDir = this.bestFirst(this.sortKey);
    this.open = Object.create(null); // model name -> provenance row open; no prototype keys
    this.selected = Object.create(null); // model name -> picked for the comparison pane
    this.byLevel = section.querySelector(".by-level-plot");
    this.lawBodies = Array.prototype.slice.call(section.querySelectorAll("table.law tbody"));
    this.pane = h("div", { class: "compare", hidden: true, "aria-live": "polite" });
    this.table.parentNode.parentNode.insertBefore(this.pane, this.table.parentNode.nextSibling);
    var self = this;
    board.metrics.forEach(function (m) {
      self.select.appendChild(h("option", { value: m.name, text: m.label + (m.higher_is_better ? " ↑" : " ↓") }));
    });
    this.select.value = this.metric;
    this.figures = Array.prototype.slice.call(section.querySelectorAll("figure[data-metric]"));
    this.select.addEventListener("change", function () {
      self.metric = self.select.value;
      if (self.sortKey !== "model") self.sortDir = self.bestFirst(self.sortKey);
      self.render();
    });
    this.render();
  }

  Board.prototype.bestFirst = function (key) {
    if (key === "model") return 1;
    var m = metricOf(this.board, this.metric);
    return m && m.higher_is_better ? -1 : 1;
  };

  Board.prototype.sortedRows = function () {
    var key = this.sortKey, dir = this.sortDir, metric = this.metric;
    return this.board.rows.slice().sort(function (a, b) {
      if (key === "model") return dir * a.model.localeCompare(b.model);
      var x = sortValue(a, key, metric), y = sortValue(b, key, metric);
      if (x === null && y === null) return a.model.localeCompare(b.model);
      if (x === null) return 1; // missing values last, whichever the direction
      if (y === null) return -1;
      return dir * (x - y) || a.model.localeCompare(b.model);
    });
  };

  Board.prototype.header = function () {
    var self = this;
    var metric = metricOf(this.board, this.metric);
    var arrow = metric && metric.higher_is_better ? "↑" : "↓";
    var row = h("tr", {}, [h("th", { class: "rank", scope: "col", text: "#" })]);
    var columns = [{ key: "model", label: "Model", title: "sort by name" }].concat(this.columns());
    columns.forEach(function (col) {
      var sorted = self.sortKey === col.key;
      var indicator = sorted ? (self.sortDir === 1 ? "▲" : "▼") : "";
      var button = h("button", { type: "button", class: "sort", "data-key": col.key, title: col.title || "" }, [
        col.key === "model" ? null : h("span", { class: "grp", text: col.group || "\u00a0" }),
        h("span", { class: "lbl", text: col.short || col.label }),
        col.key === "model" ? null : h("span", { class: "dir", title: metric && metric.higher_is_better ? "higher is better" : "lower is better", text: " " + arrow }),
        h("span", { class: "sort-ind", "aria-hidden": "true", text: indicator }),
      ]);
      button.addEventListener("click", function () {
        if (self.sortKey === col.key) self.sortDir = -self.sortDir;
        else { self.sortKey = col.key; self.sortDir = self.bestFirst(col.key); }
        self.render();
      });
      row.appendChild(h("th", {
        scope: "col", class: col.key === "model" ? "model" : "num" + (col.more ? " lvl-more" : ""), "data-key": col.key,
        "aria-sort": sorted ? (self.sortDir === 1 ? "ascending" : "descending") : null,
      }, [button]));
    });
    return h("thead", {}, [row]);
  };

  // The level columns with the gap column after its OOD column; `more`: a column the phone layout
  // folds away (every OOD level but the overall one), so ID, OOD and the gap stay side by side.
  Board.prototype.columns = function () {
    var gap = this.board.gap, out = [];
    this.board.levels.forEach(function (level) {
      var keep = !gap || level.key === gap.id || level.key === gap.ood;
      out.push({ key: level.key, label: level.label, group: level.group, short: level.short, title: level.title, more: !keep });
      if (gap && level.key === gap.ood) {
        out.push({ key: GAP, label: gap.label, group: "gap", short: gap.short || gap.label, title: gap.label +
          ": how many times the ID error the model makes out of distribution (near 1: it learned the law). " + gap.method });
      }
    });
    return out;
  };

  Board.prototype.render = function () {
    var self = this, board = this.board;
    var metric = metricOf(board, this.metric);
    var table = this.table;
    while (table.firstChild) table.removeChild(table.firstChild);
    if (!metric) {
      table.appendChild(h("caption", { text: "No metrics in these results." }));
      return;
    }
    table.appendChild(h("caption", {
      text: board.title + ": " + metric.label.toLowerCase() + (metric.unit ? " (" + metric.unit + ")" : "") +
        ", " + (metric.higher_is_better ? "higher" : "lower") + " is better",
    }));
    table.appendChild(this.header());
    this.figures.forEach(function (f) { f.hidden = f.getAttribute("data-metric") !== metric.name; });
    var columns = this.columns();
    var width = columns.length + 2;
    this.sortedRows().forEach(function (row, i) {
      var detailsId = board.id + "-prov-" + board.rows.indexOf(row);
      var pick = h("input", { type: "checkbox", class: "pick", "aria-label": "compare " + row.model,
        title: "select to compare", checked: !!self.selected[row.model] });
      pick.addEventListener("change", function () {
        if (pick.checked) self.selected[row.model] = true; else delete self.selected[row.model];
        self.drawCompare();
        self.drawByLevel();
      });
      var main = h("tr", { class: "main", "data-model": row.model }, [h("td", { class: "rank" }, [pick, h("span", { text: String(i + 1) })])]);
      var model = modelCell(row, detailsId);
      main.appendChild(model);
      columns.forEach(function (col) {
        var td = col.key === GAP ? gapCell(board, row, metric) : valueCell(row, col, metric);
        if (col.more) td.classList.add("lvl-more");
        main.appendChild(td);
      });
      var details = h("tr", { class: "details", id: detailsId }, [
        h("td", { colspan: String(width) }, [h("div", { class: "sources" }, row.sources.map(sourceCard))]),
      ]);
      var open = !!self.open[row.model];
      details.hidden = !open;
      var toggle = model.querySelector("button.toggle");
      var show = function (yes) {
        details.hidden = !yes;
        toggle.setAttribute("aria-expanded", String(yes));
        toggle.querySelector(".caret").textContent = yes ? "▾" : "▸";
        if (main.parentNode) main.parentNode.classList.toggle("open", yes);
      };
      toggle.addEventListener("click", function () {
        self.open[row.model] = details.hidden;
        show(details.hidden);
      });
      table.appendChild(h("tbody", { class: "group" }, [main, details]));
      show(open);
    });
    this.paperRows(metric, columns, width);
    this.fit();
    this.followOrder();
    this.drawByLevel();
    this.drawCompare();
  };

  // The paper's own numbers (paper.py): quoted under the rows for the metric they compare with,
  // never ranked or sorted with them; under another metric, one line says where they are.
  Board.prototype.paperRows = function (metric, columns, width) {
    var ref = this.board.paper;
    if (!ref) return;
    var body = h("tbody", { class: "paper" });
    if (ref.metric !== metric.name) {
      var named = metricOf(this.board, ref.metric);
      body.appendChild(h("tr", { class: "paper-note" }, [h("td", { colspan: String(width),
        text: "The paper's numbers (" + ref.source + ") are quoted under " + (named ? named.label : ref.metric) + "." })]));
      this.table.appendChild(body);
      return;
    }
    body.appendChild(h("tr", { class: "paper-head" }, [h("th", { colspan: String(width), scope: "rowgroup",
      text: "Paper: " + ref.note + ". " + ref.source + "." })]));
    ref.rows.forEach(function (row) {
      var tr = h("tr", { class: "paper-row", "data-paper": row.model }, [
        h("td", { class: "rank", text: "paper" }),
        h("td", { class: "model" }, [h("span", { text: row.model }), h("span", { class: "paper-mark", text: " quoted from the paper" })]),
      ]);
      columns.forEach(function (col) {
        var v = Object.prototype.hasOwnProperty.call(row.cells, col.key) ? row.cells[col.key] : null;
        var approx = (row.approx || []).indexOf(col.key) >= 0;
        var td = v === null ? h("td", { class: "num empty", text: "–" }) :
          h("td", { class: "num", title: approx ? "approximate: hidden behind another point of their plot" : "quoted from the paper" },
            [h("span", { class: "mean", text: (approx ? "~" : "") + fmt(v) })]);
        if (col.more) td.classList.add("lvl-more");
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    this.table.appendChild(body);
  };

  // The learned-law tables list models in the main table's order (the ground truth's row first).
  Board.prototype.followOrder = function () {
    var order = this.sortedRows().map(function (r) { return r.model; });
    this.lawBodies.forEach(function (body) {
      var rows = Array.prototype.slice.call(body.querySelectorAll("tr[data-model]"));
      rows.sort(function (a, b) { return order.indexOf(a.getAttribute("data-model")) - order.indexOf(b.getAttribute("data-model")); });
      rows.forEach(function (tr) { body.appendChild(tr); });
    });
  };

  Board.prototype.picked = function () {
    var self = this;
    return this.sortedRows().filter(function (r) { return self.selected[r.model]; });
  };

  // The by-level plot: the selected rows, or else the best-ranked MAX_LINES on the metric shown.
  Board.prototype.drawByLevel = function () {
    if (!this.byLevel) return;
    var metric = metricOf(this.board, this.metric), picked = this.picked();
    var self = this;
    var ranked = this.board.rows.slice().sort(function (a, b) {
      var x = valueOf(a, self.board.levels[0].key, self.metric), y = valueOf(b, self.board.levels[0].key, self.metric);
      if (x === null || y === null) return (x === null) - (y === null) || a.model.localeCompare(b.model);
      return self.bestFirst(self.board.levels[0].key) * (x - y) || a.model.localeCompare(b.model);
    });
    var rows = (picked.length ? picked : ranked).slice(0, MAX_LINES);
    while (this.byLevel.firstChild) this.byLevel.removeChild(this.byLevel.firstChild);
    var svg = metric ? byLevelPlot(this.board, metric, rows, this.board.colours || {}) : null;
    var figure = this.byLevel.parentNode, words = figure.querySelector(".metric-words");
    if (svg) this.byLevel.appendChild(svg);
    figure.hidden = !svg;
    if (!metric) return;
    figure.setAttribute("data-metric", metric.name); // the plot follows the metric switch, as the others
    // the metric in words, as site.py `_metric_words`
    if (words) words.textContent = metric.label + " (" + metric.name + (metric.unit ? ", " + metric.unit : "") + "; " +
      (metric.higher_is_better ? "higher" : "lower") + " is better)";
  };

  // The comparison pane: the selected rows side by side, level by level, with the gap.
  Board.prototype.drawCompare = function () {
    var self = this, pane = this.pane, board = this.board;
    var metric = metricOf(board, this.metric), picked = this.picked();
    while (pane.firstChild) pane.removeChild(pane.firstChild);
    pane.hidden = !picked.length || !metric;
    if (pane.hidden) return;
    var clear = h("button", { type: "button", class: "clear", text: "clear" });
    clear.addEventListener("click", function () { self.selected = Object.create(null); self.render(); });
    pane.appendChild(h("div", { class: "compare-head" }, [
      h("strong", { text: "Comparing " + picked.length + " model" + (picked.length === 1 ? "" : "s") }),
      " · " + metric.label.toLowerCase() + (metric.unit ? " (" + metric.unit + ")" : "") + ", mean and 95% interval ", clear]));
    var head = h("tr", {}, [h("th", { scope: "col", text: "level" })].concat(picked.map(function (r) {
      return h("th", { scope: "col", class: "num", text: r.model });
    })));
    var body = h("tbody", {});
    this.columns().forEach(function (col) {
      var tr = h("tr", { "data-key": col.key }, [h("th", { scope: "row", text: col.key === GAP ? col.label : col.label })]);
      picked.forEach(function (r) { tr.appendChild(col.key === GAP ? gapCell(board, r, metric) : valueCell(r, col, metric)); });
      body.appendChild(tr);
    });
    pane.appendChild(h("div", { class: "compare-wrap" }, [h("table", { class: "compare-table" }, [h("thead", {}, [head]), body])]));
  };

  // Sticky headers need a table that fits the page; a wider one scrolls sideways instead.
  Board.prototype.fit = function () {
    var wrap = this.table.parentNode;
    wrap.classList.remove("scroll");
    wrap.classList.toggle("scroll", this.table.scrollWidth > wrap.clientWidth + 1);
  };

  // ------------------------------------------------------------------ deep links (deep_links.py)
  // A scatter dot whose path names a viewer (data-href) and each dot's sample id (percent-encoded:
  // data-prefix + its word of data-ids) opens that video in the viewer: the dot nearest a click, within HIT px.
  var HIT = 8;
  var VIEWER_HREF = /^viewers\/[A-Za-z0-9][A-Za-z0-9._-]*\/index\.html$/;
  var ENCODED_ID = /^[A-Za-z0-9%._~\/-]+$/;

  function linkedDots(svg) {
    var out = [];
    Array.prototype.forEach.call(svg.querySelectorAll("path[data-href][data-ids]"), function (path) {
      var href = path.getAttribute("data-href"), ids = path.getAttribute("data-ids").split(" ");
      var prefix = path.getAttribute("data-prefix") || "";
      if (!VIEWER_HREF.test(href)) return;
      var dy = path.classList.contains("outliers") ? 4 : 0; // an edge diamond's path starts 4 px above its point
      var re = /M(-?[\d.]+) (-?[\d.]+)/g, m, k = 0;
      while ((m = re.exec(path.getAttribute("d"))) !== null) {
        var word = ids[k++];
        var id = word === undefined ? "" : prefix + word;
        if (id && ENCODED_ID.test(id)) out.push({ x: Number(m[1]), y: Number(m[2]) + dy, id: id, href: href });
      }
    });
    return out;
  }

  function nearestDot(svg, dots, event) {
    var ctm = svg.getScreenCTM();
    if (!ctm) return null;
    var p = svg.createSVGPoint();
    p.x = event.clientX; p.y = event.clientY;
    p = p.matrixTransform(ctm.inverse());
    var best = null, bestD = HIT * HIT;
    dots.forEach(function (d) {
      var dd = (d.x - p.x) * (d.x - p.x) + (d.y - p.y) * (d.y - p.y);
      if (dd <= bestD) { best = d; bestD = dd; }
    });
    return best;
  }

  function linkScatter(svg) {
    var dots = linkedDots(svg);
    if (!dots.length) return;
    svg.classList.add("linked");
    svg.addEventListener("mousemove", function (event) {
      var d = nearestDot(svg, dots, event);
      svg.classList.toggle("pointing", !!d);
      var name = "";
      try { name = d ? decodeURIComponent(d.id) : ""; } catch (e) { name = d.id; }
      svg.setAttribute("data-near", name); // set as an attribute value: never parsed as markup
    });
    svg.addEventListener("click", function (event) {
      var d = nearestDot(svg, dots, event);
      if (d) window.location.href = d.href + "#v=" + d.id;
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("svg.plot"), linkScatter);

  var boards = [];
  DATA.boards.forEach(function (board) {
    var section = document.getElementById(board.id);
    if (section) boards.push(new Board(board, section));
  });
  window.addEventListener("resize", function () {
    boards.forEach(function (b) { b.fit(); });
  });
})();

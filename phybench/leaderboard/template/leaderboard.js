/* phybench leaderboard: draws the task tables from the JSON embedded in index.html.
 *
 * Plain script, no dependencies, no network: it works opened from file://.  Text from
 * submissions (model names, notes) is only ever set with textContent or as attribute
 * values, never parsed as HTML.  Number formatting mirrors `fmt` in phybench/leaderboard.py.
 */
(function () {
  "use strict";

  var DATA = JSON.parse(document.getElementById("phybench-data").textContent);
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
    return cell && cell.metrics ? cell.metrics[metric] || null : null;
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

  // ------------------------------------------------------------------ table cells
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
    var children = [h("div", { class: "name", text: row.model })];
    if (bits.length) children.push(h("div", { class: "meta", text: bits.join(" · ") }));
    var v = row.verification || { verified: false, text: "self-reported" };
    children.push(h("span", {
      class: v.verified ? "badge verified" : "badge self", text: v.verified ? "verified" : "self-reported",
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
    if (v.text !== "self-reported") children.push(h("div", { class: "verification", text: v.text }));
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
      var x = valueOf(a, key, metric), y = valueOf(b, key, metric);
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
    var columns = [{ key: "model", label: "Model", title: "sort by name" }].concat(this.board.levels);
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
        scope: "col", class: col.key === "model" ? "model" : "num", "data-key": col.key,
        "aria-sort": sorted ? (self.sortDir === 1 ? "ascending" : "descending") : null,
      }, [button]));
    });
    return h("thead", {}, [row]);
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
    var width = board.levels.length + 2;
    this.sortedRows().forEach(function (row, i) {
      var detailsId = board.id + "-prov-" + board.rows.indexOf(row);
      var main = h("tr", { class: "main", "data-model": row.model }, [h("td", { class: "rank", text: String(i + 1) })]);
      var model = modelCell(row, detailsId);
      main.appendChild(model);
      board.levels.forEach(function (level) { main.appendChild(valueCell(row, level, metric)); });
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
    this.fit();
  };

  // Sticky headers need a table that fits the page; a wider one scrolls sideways instead.
  Board.prototype.fit = function () {
    var wrap = this.table.parentNode;
    wrap.classList.remove("scroll");
    wrap.classList.toggle("scroll", this.table.scrollWidth > wrap.clientWidth + 1);
  };

  var boards = [];
  DATA.boards.forEach(function (board) {
    var section = document.getElementById(board.id);
    if (section) boards.push(new Board(board, section));
  });
  window.addEventListener("resize", function () {
    boards.forEach(function (b) { b.fit(); });
  });
})();

// The report's only script: unpack echarts, draw every chart from the options that
// the Go side built, make print images, and record in #ceiling-status what happened
// (tests read it with a headless browser). Data never becomes code: options arrive
// as JSON and every string shown in HTML tooltips goes through esc().
(function () {
  "use strict";
  var status = document.getElementById("ceiling-status");
  var errors = [];
  function noteError(msg) {
    errors.push(String(msg).slice(0, 300));
    status.setAttribute("data-errors", errors.join(" | "));
  }
  window.addEventListener("error", function (e) {
    noteError((e && e.message) || "script error");
  });
  window.addEventListener("unhandledrejection", function (e) {
    var r = e && e.reason;
    noteError("unhandled rejection: " + ((r && r.message) || r));
  });

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function fmt(v) {
    if (v === null || v === undefined || v === "-" || typeof v !== "number" || !isFinite(v)) return "—";
    var a = Math.abs(v);
    if (a >= 100) return Math.round(v).toLocaleString("en-US");
    if (a >= 10) return String(Math.round(v * 10) / 10);
    if (a >= 1) return String(Math.round(v * 100) / 100);
    if (a === 0) return "0";
    return String(Number(v.toPrecision(2)));
  }
  function withUnit(v, unit) {
    var s = fmt(v);
    return s === "—" || !unit ? s : s + " " + unit;
  }

  function loadEcharts() {
    if (typeof DecompressionStream === "undefined" || typeof Response === "undefined" || typeof Blob === "undefined") {
      return Promise.reject(new Error("nodecompress"));
    }
    var b64 = JSON.parse(document.getElementById("ceiling-echarts-gz").textContent);
    var bin = atob(b64);
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(function (src) {
      // Indirect eval runs the library at global scope, like a script element.
      (0, eval)(src);
      if (!window.echarts) throw new Error("echarts did not define itself");
    });
  }

  // tooltip adds the formatters that JSON cannot carry.
  function tooltip(opt, spec) {
    var tt = opt.tooltip || (opt.tooltip = {});
    tt.confine = true;
    if (spec.tip === "peruser") {
      tt.formatter = function (p) {
        if (p.componentType !== "series" || !Array.isArray(p.value)) return esc(p.name || "");
        return esc(p.seriesName) + "<br>concurrency " + esc(p.value[2]) +
          "<br>" + withUnit(p.value[0], "tok/s") + " total" +
          "<br>" + withUnit(p.value[1], "tok/s") + " per user";
      };
    } else if (spec.tip === "timeline") {
      tt.formatter = function (ps) {
        if (!Array.isArray(ps) || !ps.length) return "";
        var out = "request " + esc(ps[0].name);
        ps.forEach(function (p) {
          var v = p.value !== null && typeof p.value === "object" ? p.value.value : p.value;
          out += "<br>" + p.marker + esc(p.seriesName) + ": " + withUnit(v, "s");
        });
        return out;
      };
    } else {
      tt.valueFormatter = function (v) {
        return withUnit(Array.isArray(v) ? v[1] : v, spec.yUnit);
      };
    }
  }

  // painted reports whether the chart's SVG holds drawn shapes and its series data.
  function painted(chart) {
    var svg = chart.getDom().querySelector("svg");
    if (!svg || !svg.getAttribute("width")) return false;
    var shapes = svg.querySelectorAll("path, rect, circle, polyline").length;
    var points = 0;
    (chart.getOption().series || []).forEach(function (s) {
      points += s.data ? s.data.length : 0;
    });
    return shapes > 5 && points > 0;
  }

  // echarts sizes the value axis to the data only, so a horizontal mark line above
  // every point (an SLO, the KV capacity) would fall off the chart. Stretch the axis
  // to keep each one in view.
  function fitMarkLines(opt) {
    var top = -Infinity;
    (opt.series || []).forEach(function (s) {
      ((s.markLine && s.markLine.data) || []).forEach(function (d) {
        if (typeof d.yAxis === "number") top = Math.max(top, d.yAxis);
      });
    });
    var y = Array.isArray(opt.yAxis) ? opt.yAxis[0] : opt.yAxis;
    if (!isFinite(top) || !y || (y.type && y.type !== "value") || y.max != null) return;
    var dataTop = -Infinity;
    (opt.series || []).forEach(function (s) {
      (s.data || []).forEach(function (d) {
        var v = d && d.value !== undefined ? d.value : d;
        v = Array.isArray(v) ? v[1] : v;
        if (typeof v === "number") dataTop = Math.max(dataTop, v);
      });
    });
    if (top > dataTop) {
      // a round number a little above the line, so the axis keeps tidy labels
      var v = top * 1.08;
      var step = Math.pow(10, Math.floor(Math.log10(v))) / 2;
      y.max = Math.ceil(v / step) * step;
    }
  }

  // fitLegend moves the plot area below the legend once echarts has laid the legend
  // out (it wraps onto more lines on a narrow chart), leaving room for the value
  // axis' name, which sits above the axis.
  function fitLegend(chart, opt) {
    var lm = chart.getModel().getComponent("legend");
    var view = lm && chart.getViewOfComponentModel(lm);
    if (!view || !view.group) return;
    var r = view.group.getBoundingRect();
    var bottom = (view.group.y || 0) + r.y + r.height;
    var ys = Array.isArray(opt.yAxis) ? opt.yAxis : [opt.yAxis];
    var named = ys.some(function (y) { return y && y.name; });
    var top = Math.ceil(bottom + (named ? 30 : 12));
    var grid = Array.isArray(opt.grid) ? opt.grid[0] : opt.grid;
    if (grid && Number(grid.top) !== top) chart.setOption({ grid: [{ top: top }] });
  }

  function makeChart(el, spec, size, onFinished) {
    var chart = echarts.init(el, null, Object.assign({ renderer: "svg" }, size || {}));
    if (onFinished) chart.on("finished", onFinished);
    var opt = JSON.parse(JSON.stringify(spec.option));
    opt.textStyle = Object.assign(opt.textStyle || {}, { fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" });
    tooltip(opt, spec);
    fitMarkLines(opt);
    chart.setOption(opt);
    fitLegend(chart, opt);
    return chart;
  }

  // The print copy of every chart is drawn once at the print width, so that printed
  // text keeps its size whatever the window was (a chart drawn 1,100 px wide and
  // shrunk onto paper would print at 5 pt); the SVG then scales to the column.
  // A wide chart spans the page; the others print two to a row, each drawn at the
  // column's width (the page's narrow-screen layout, which the tests check too).
  var PRINT_WIDTH = 700, PRINT_HALF_WIDTH = 336, PRINT_MAX_HEIGHT = 480;
  function printCopy(spec, height) {
    var box = document.querySelector('.chart-print[data-for="' + spec.id + '"]');
    if (!box) return null;
    var wide = box.parentNode.classList.contains("wide");
    var w = wide ? PRINT_WIDTH : PRINT_HALF_WIDTH;
    var h = Math.min(wide ? height : Math.round(height * 0.9), PRINT_MAX_HEIGHT);
    box.style.setProperty("--print-width", w + "px");
    var chart = makeChart(box, spec, { width: w, height: h });
    var svg = box.querySelector("svg");
    if (svg) {
      svg.setAttribute("viewBox", "0 0 " + w + " " + h);
      svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    }
    return chart;
  }

  // layoutIssues measures every text of a chart's SVG as the browser drew it: two
  // labels that overlap, or a label that leaves the chart's box, is a defect.
  function layoutIssues(root, id) {
    var box = root.getBoundingClientRect();
    var items = [];
    Array.prototype.forEach.call(root.querySelectorAll("svg text"), function (t) {
      var s = (t.textContent || "").trim();
      if (!s) return;
      var r = t.getBoundingClientRect();
      if (r.width < 0.5 || r.height < 0.5) return;
      var st = getComputedStyle(t);
      if (st.visibility === "hidden" || st.display === "none" || Number(st.opacity) === 0 || t.getAttribute("opacity") === "0") return;
      items.push({ s: s, r: r });
    });
    var overlaps = [], outside = [];
    var tol = 1;
    items.forEach(function (a, i) {
      var r = a.r;
      if (r.left < box.left - tol || r.right > box.right + tol || r.top < box.top - tol || r.bottom > box.bottom + tol) {
        outside.push(id + ": '" + a.s + "'");
      }
      for (var j = i + 1; j < items.length; j++) {
        var q = items[j].r;
        var ix = Math.min(r.right, q.right) - Math.max(r.left, q.left);
        var iy = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
        if (ix > tol && iy > tol) overlaps.push(id + ": '" + a.s + "' × '" + items[j].s + "'");
      }
    });
    return { labels: items.length, overlaps: overlaps, outside: outside };
  }

  // minFont finds the smallest text the page shows as laid out now (the test lays out
  // a copy with the print rules applied, at the paper's width): the element's font
  // size for HTML text, and for chart text its font size times the scale at which
  // its SVG is shown. It returns "px:the text".
  function minFont() {
    var best = Infinity, what = "";
    function consider(px, text) {
      if (px < best) {
        best = px;
        what = text;
      }
    }
    var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (var n = walker.nextNode(); n; n = walker.nextNode()) {
      var text = n.nodeValue.trim();
      var el = n.parentElement;
      if (!text || !el || el.closest("svg, script, style, [hidden]")) continue;
      var r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) continue;
      consider(parseFloat(getComputedStyle(el).fontSize), text.slice(0, 40));
    }
    Array.prototype.forEach.call(document.querySelectorAll("svg text"), function (t) {
      var svg = t.ownerSVGElement;
      var text = (t.textContent || "").trim();
      if (!svg || !text) return;
      var r = svg.getBoundingClientRect();
      var w = parseFloat(svg.getAttribute("width"));
      if (r.width < 1 || !w) return;
      var vb = svg.viewBox && svg.viewBox.baseVal;
      var scale = r.width / (vb && vb.width ? vb.width : w);
      consider(parseFloat(getComputedStyle(t).fontSize) * scale, text.slice(0, 40));
    });
    return isFinite(best) ? best.toFixed(2) + ":" + what : "";
  }

  function drawAll() {
    var specs = JSON.parse(document.getElementById("ceiling-charts").textContent) || [];
    var selftest = location.hash === "#selftest";
    if (selftest) {
      // open the collapsed charts, so that their layout is checked too
      Array.prototype.forEach.call(document.querySelectorAll("details.raw"), function (d) { d.open = true; });
    }
    var instances = [], prints = [];
    var pending = specs.length, drawn = 0, blank = [];
    function settle(id, ok) {
      pending--;
      if (ok) drawn++;
      else blank.push(id);
      status.setAttribute("data-charts-drawn", String(drawn));
      status.setAttribute("data-charts-blank", blank.join(" "));
      if (pending === 0) finish(instances, prints);
    }
    if (!specs.length) finish(instances, prints);
    specs.forEach(function (spec) {
      var el = document.getElementById(spec.id);
      if (!el) {
        noteError(spec.id + ": no element");
        settle(spec.id, false);
        return;
      }
      el.textContent = "";
      try {
        var height = parseInt(el.style.height, 10) || 360;
        var size = null;
        if (!el.clientWidth) {
          // Hidden (a closed <details>): draw at a fixed size; opening resizes it.
          size = { width: el.parentNode.classList.contains("wide") ? 1100 : 560, height: height };
        }
        var done = false, chart = null;
        var onFinished = function () {
          if (done || !chart) return;
          done = true;
          var ok = false;
          try {
            ok = painted(chart);
          } catch (e) {
            noteError(spec.id + ": " + e.message);
          }
          settle(spec.id, ok);
        };
        chart = makeChart(el, spec, size, function () {
          // echarts may finish inside setOption, before makeChart returns
          setTimeout(onFinished, 0);
        });
        instances.push(chart);
        var pc = printCopy(spec, height);
        if (pc) prints.push(pc);
      } catch (e) {
        noteError(spec.id + ": " + e.message);
        settle(spec.id, false);
      }
    });
    window.addEventListener("resize", function () {
      instances.forEach(function (c) {
        c.resize();
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll("details.raw"), function (d) {
      d.addEventListener("toggle", function () {
        instances.forEach(function (c) {
          if (d.contains(c.getDom())) c.resize({ width: "auto" });
        });
      });
    });
  }

  // overflowing lists what a reader at this width cannot see whole: an element
  // that ends past the window, a box whose content is wider than it (a table cell a
  // long model name pushes out), and a scrolling box that scrolls sideways unless
  // it is marked data-may-scroll (the per-level tables, many columns of numbers by
  // design). What is inside a scrolling box is reachable and judged by the box.
  function overflowing() {
    var out = [], width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > width + 1) {
      out.push("page: " + document.documentElement.scrollWidth + " px wide in a " + width + " px window");
    }
    function scrolls(el) {
      var x = getComputedStyle(el).overflowX;
      return x === "auto" || x === "scroll" || x === "hidden";
    }
    function inScroller(el) {
      for (var p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        if (scrolls(p)) return true;
      }
      return false;
    }
    Array.prototype.forEach.call(document.querySelectorAll("body *"), function (el) {
      if (el.closest(".chart-box, .chart-print, script, style, details:not([open])") || inScroller(el)) return;
      var r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) return;
      var tag = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (typeof el.className === "string" && el.className ? "." + el.className.split(" ")[0] : "");
      var text = (el.textContent || "").trim().slice(0, 60);
      var wide = el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0;
      if (r.right > width + 1) {
        out.push(tag + " ends at " + Math.round(r.right) + " px: " + text);
      } else if (wide && scrolls(el)) {
        if (!el.hasAttribute("data-may-scroll")) out.push(tag + " scrolls sideways (" + el.scrollWidth + " px in " + el.clientWidth + " px): " + text);
      } else if (wide && getComputedStyle(el).textOverflow !== "ellipsis") {
        out.push(tag + " holds " + el.scrollWidth + " px in " + el.clientWidth + " px: " + text);
      }
    });
    return out.slice(0, 20);
  }

  function finish(instances, prints) {
    // #selftest (used by the browser test) opens every tooltip once, so that any
    // markup a data string could inject would land in the DOM and be counted, and
    // measures the drawn text of every chart, on screen and in its print copy.
    if (location.hash === "#selftest") {
      var labels = 0, overlaps = [], outside = [];
      function collect(res) {
        labels += res.labels;
        overlaps = overlaps.concat(res.overlaps);
        outside = outside.concat(res.outside);
      }
      instances.forEach(function (c) {
        collect(layoutIssues(c.getDom(), c.getDom().id));
      });
      document.documentElement.classList.add("measure-print");
      prints.forEach(function (c) {
        collect(layoutIssues(c.getDom(), "print " + c.getDom().getAttribute("data-for")));
      });
      document.documentElement.classList.remove("measure-print");
      status.setAttribute("data-labels", String(labels));
      status.setAttribute("data-min-font", minFont());
      status.setAttribute("data-overlaps", overlaps.join(" | "));
      status.setAttribute("data-outside", outside.join(" | "));
      status.setAttribute("data-overflow", overflowing().join(" | "));
      instances.forEach(function (c) {
        try {
          c.dispatchAction({ type: "showTip", seriesIndex: 0, dataIndex: 0 });
          c.dispatchAction({ type: "hideTip" });
        } catch (e) {
          noteError(c.getDom().id + ": tooltip: " + e.message);
        }
      });
    }
    status.setAttribute("data-injected", String(document.querySelectorAll('img[src="x"], img[onerror]').length));
    status.setAttribute("data-state", "done");
  }

  function noLibrary() {
    var msg = "The charts need a browser that can unpack the embedded chart library (DecompressionStream: Chrome or Edge 80+, Firefox 113+, Safari 16.4+). Every number and table in this report is complete without them.";
    var banner = document.getElementById("ceiling-nolib");
    banner.textContent = msg;
    banner.hidden = false;
    Array.prototype.forEach.call(document.querySelectorAll(".chart-box"), function (el) {
      el.textContent = "Chart not drawn: this browser cannot unpack the chart library.";
    });
    status.setAttribute("data-state", "nolib");
  }

  loadEcharts().then(drawAll, function (e) {
    if (e && e.message === "nodecompress") noLibrary();
    else {
      noteError("loading echarts: " + ((e && e.message) || e));
      status.setAttribute("data-state", "failed");
    }
  });
})();

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

  // painted reports whether the chart's canvas holds drawn pixels and its series data.
  function painted(chart) {
    var canvas = chart.getDom().querySelector("canvas");
    if (!canvas || !canvas.width || !canvas.height) return false;
    var d = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    var ink = 0;
    for (var i = 3; i < d.length; i += 32) if (d[i] > 0) ink++;
    var points = 0;
    (chart.getOption().series || []).forEach(function (s) {
      points += s.data ? s.data.length : 0;
    });
    return ink > 20 && points > 0;
  }

  function printImage(chart, id) {
    var img = document.querySelector('img.chart-print[data-for="' + id + '"]');
    if (!img) return;
    try {
      img.src = chart.getDataURL({ type: "png", pixelRatio: 2, backgroundColor: "#ffffff" });
    } catch (e) {
      noteError(id + ": print image: " + e.message);
    }
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
      var v = top * 1.05;
      var step = Math.pow(10, Math.floor(Math.log10(v))) / 2;
      y.max = Math.ceil(v / step) * step;
    }
  }

  function drawAll() {
    var specs = JSON.parse(document.getElementById("ceiling-charts").textContent) || [];
    var instances = [];
    var pending = specs.length, drawn = 0, blank = [];
    function settle(id, ok) {
      pending--;
      if (ok) drawn++;
      else blank.push(id);
      status.setAttribute("data-charts-drawn", String(drawn));
      status.setAttribute("data-charts-blank", blank.join(" "));
      if (pending === 0) finish(instances);
    }
    if (!specs.length) finish(instances);
    specs.forEach(function (spec) {
      var el = document.getElementById(spec.id);
      if (!el) {
        noteError(spec.id + ": no element");
        settle(spec.id, false);
        return;
      }
      el.textContent = "";
      try {
        var initOpts = { renderer: "canvas" };
        if (!el.clientWidth) {
          // Laid out for print already (or hidden): draw at a fixed size so that the
          // print image is a readable chart, not a default-sized thumbnail.
          initOpts.width = el.parentNode.classList.contains("wide") ? 1100 : 560;
          initOpts.height = parseInt(el.style.height, 10) || 360;
        }
        var chart = echarts.init(el, null, initOpts);
        var opt = spec.option;
        opt.textStyle = { fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" };
        tooltip(opt, spec);
        fitMarkLines(opt);
        var done = false;
        chart.on("finished", function () {
          if (done) return;
          done = true;
          var ok = false;
          try {
            ok = painted(chart);
          } catch (e) {
            noteError(spec.id + ": " + e.message);
          }
          printImage(chart, spec.id);
          settle(spec.id, ok);
        });
        chart.setOption(opt);
        instances.push(chart);
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
    window.addEventListener("beforeprint", function () {
      instances.forEach(function (c) {
        printImage(c, c.getDom().id);
      });
    });
  }

  function finish(instances) {
    // #selftest (used by the browser test) opens every tooltip once, so that any
    // markup a data string could inject would land in the DOM and be counted.
    if (location.hash === "#selftest") {
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

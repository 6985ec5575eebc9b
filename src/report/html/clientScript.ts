/**
 * The page's own script (runs in the browser after the inlined ECharts bundle): renders every
 * chart from the JSON payload, links their zoom, formats tooltips, and publishes
 * `window.__fleetsimCharts` (id, series, points per chart) for tests and curious users.
 */
export const CLIENT_SCRIPT = `
(function () {
  "use strict";
  var payload = JSON.parse(document.getElementById("fleetsim-data").textContent);
  var unit = payload.timeUnit;

  function fmt(v) {
    if (Array.isArray(v)) v = v[v.length - 1];
    if (v === null || v === undefined || typeof v !== "number" || !isFinite(v)) return "—";
    var a = Math.abs(v);
    if (a >= 1000) return Math.round(v).toLocaleString("en-US");
    if (v === Math.round(v)) return String(v);
    if (a >= 100) return v.toFixed(1);
    if (a >= 10) return v.toFixed(2);
    if (a >= 0.01) return v.toFixed(3);
    return v.toPrecision(3);
  }

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  function tooltip(params) {
    var list = Array.isArray(params) ? params : [params];
    if (list.length === 0) return "";
    var x = list[0].axisValue !== undefined ? list[0].axisValue : list[0].value[0];
    var rows = list.map(function (p) {
      var label = p.data && !Array.isArray(p.data) && p.data.name ? " " + esc(p.data.name) : "";
      return p.marker + esc(p.seriesName) + label + ": <b>" + fmt(p.value) + "</b>";
    });
    return '<div class="tt-head">' + esc(payload.xLabel || "t") + " = " + fmt(x) + " " + esc(unit) + "</div>" + rows.join("<br>");
  }

  var charts = [];
  payload.charts.forEach(function (spec) {
    var el = document.getElementById("chart-" + spec.id);
    var chart = echarts.init(el, null, { renderer: "canvas" });
    var option = spec.option;
    option.tooltip.formatter = tooltip;
    chart.setOption(option);
    charts.push({ spec: spec, chart: chart });
  });
  if (charts.length > 1) {
    echarts.connect(charts.map(function (c) { return c.chart; }));
  }
  window.addEventListener("resize", function () {
    charts.forEach(function (c) { c.chart.resize(); });
  });

  // What each chart drew, read back from the live instance (not from the payload).
  window.__fleetsimCharts = charts.map(function (c) {
    var live = c.chart.getOption();
    var points = 0;
    (live.series || []).forEach(function (s) {
      (s.data || []).forEach(function (d) {
        var v = d && !Array.isArray(d) && typeof d === "object" ? d.value : d;
        var y = Array.isArray(v) ? v[1] : v;
        if (typeof y === "number" && isFinite(y)) points += 1;
      });
    });
    var rendered = c.chart.getDom().querySelector("canvas") !== null;
    return { id: c.spec.id, title: c.spec.title, series: (live.series || []).length, points: points, rendered: rendered };
  });
  document.documentElement.setAttribute("data-charts-ready", String(charts.length));
})();
`;

// The HTML page of `commfit report` (backends/report.h has what it shows and the aggregation
// rules). Everything is inline: SVG charts, one <style>, two small <script>s (hover text, and a
// self-check that counts what was drawn and marks <body data-validated="ok">). One file: the
// charts share the colour scales, the escaping and the page's one layout.
#include "backends/report_page.h"

#include "backends/report.h"
#include "ir/human_units.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <string_view>

namespace commfit {
namespace {

[[gnu::format(printf, 1, 2)]] std::string fmt(const char* f, ...) {
  char buf[512];
  va_list a;
  va_start(a, f);
  const int n = std::vsnprintf(buf, sizeof buf, f, a);
  va_end(a);
  if (n < 0) return {};
  if (static_cast<std::size_t>(n) < sizeof buf) return std::string(buf, static_cast<std::size_t>(n));
  std::string s(static_cast<std::size_t>(n), '\0');
  va_start(a, f);
  std::vsnprintf(s.data(), s.size() + 1, f, a);
  va_end(a);
  return s;
}

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  return out;
}

// Viridis (9 stops, linear between them): perceptually uniform, readable in grey.
std::string colour(double t) {
  static const int stops[9][3] = {{68, 1, 84},    {71, 45, 123},  {59, 82, 139},  {44, 114, 142}, {33, 145, 140},
                                  {40, 174, 128}, {94, 201, 98}, {173, 220, 48}, {253, 231, 37}};
  t = std::clamp(std::isfinite(t) ? t : 1.0, 0.0, 1.0) * 8;
  const int i = std::min(7, static_cast<int>(t));
  const double f = t - i;
  int c[3];
  for (int k = 0; k < 3; ++k) c[k] = static_cast<int>(std::lround(stops[i][k] * (1 - f) + stops[i + 1][k] * f));
  return fmt("#%02x%02x%02x", c[0], c[1], c[2]);
}

// Logarithmic colour scale over [lo, hi] (nonzero values).
struct LogScale {
  double lo = 1, hi = 1;
  void add(double v) {
    if (v <= 0) return;
    if (empty) lo = hi = v, empty = false;
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  double operator()(double v) const { return hi > lo ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : 1.0; }
  bool empty = true;
};

// The colour of t in [0, 1], in one of 32 steps (so that cells of one colour share one path).
std::string step_colour(double t) {
  const int k = static_cast<int>(std::clamp(std::isfinite(t) ? t : 1.0, 0.0, 1.0) * 31 + 0.5);
  return colour(k / 31.0);
}

// Rectangles of a chart. Up to kTipCells of them are <rect>s with hover text; above that the
// chart is drawn as one <path> per colour without hover text, which keeps large reports small
// (about 20 bytes per cell instead of 150).
inline constexpr std::int64_t kTipCells = 1024;
struct Cells {
  explicit Cells(std::string c) : cls(std::move(c)) {}
  std::string cls;
  bool tips = true;
  std::int64_t count = 0;
  std::string rects;
  std::map<std::string, std::string> paths;   // colour -> path data
  static std::string num(double v) {
    const double r = std::round(v * 10) / 10;
    return r == std::floor(r) ? std::to_string(static_cast<long long>(r)) : fmt("%.1f", r);
  }
  void add(double x, double y, double w, double h, const std::string& fill, const std::string& tip) {
    ++count;
    if (tips)
      rects += "<rect class=\"" + cls + "\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
               "\" fill=\"" + fill + "\" data-t=\"" + tip + "\"/>";
    else
      paths[fill] += "M" + num(x) + " " + num(y) + "h" + num(w) + "v" + num(h) + "h-" + num(w) + "z";
  }
  std::string str() const {
    std::string out = rects;
    for (const auto& [fill, d] : paths) out += "<path class=\"" + cls + "\" fill=\"" + fill + "\" d=\"" + d + "\"/>";
    return out;
  }
};

// A colour bar with the scale's ends, at (x, y), w wide.
std::string legend(const LogScale& s, double x, double y, double w, const std::string& what, std::string (*label)(double)) {
  std::string out = fmt("<g class=\"legend\"><text x=\"%.1f\" y=\"%.1f\">%s</text>", x, y - 4, esc(what).c_str());
  const int n = 32;
  for (int k = 0; k < n; ++k)
    out += fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"10\" fill=\"%s\"/>", x + w * k / n, y, w / n + 0.3, colour((k + 0.5) / n).c_str());
  out += fmt("<text x=\"%.1f\" y=\"%.1f\">%s</text>", x, y + 22, esc(label(s.lo)).c_str());
  out += fmt("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text></g>", x + w, y + 22, esc(label(s.hi)).c_str());
  return out;
}

// "17" or "16-31": the ranks (or phases) of group g of size b out of n.
std::string span(std::int64_t g, std::int64_t b, std::int64_t n) {
  const std::int64_t first = g * b, last = std::min(n, first + b) - 1;
  return first == last ? std::to_string(first) : std::to_string(first) + "\xe2\x80\x93" + std::to_string(last);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// ---- the heatmap -------------------------------------------------------------------------------
std::string heatmap(const ReportData& d) {
  const std::int64_t p = d.p, bs = ceil_div(p, kReportMaxCells), G = ceil_div(p, bs);
  std::vector<Bytes> cell(static_cast<std::size_t>(G * G), 0);
  d.matrix.for_each([&](Rank i, Rank j, Bytes b) { cell[static_cast<std::size_t>((i / bs) * G + j / bs)] += b; });
  LogScale scale;
  for (Bytes b : cell) scale.add(static_cast<double>(b));
  const int cs = static_cast<int>(std::clamp<std::int64_t>(448 / G, 4, 28));
  const int left = 64, top = 34, size = static_cast<int>(G) * cs;
  Cells body("c");
  std::int64_t nonzero = 0;
  for (Bytes b : cell) nonzero += b > 0;
  body.tips = nonzero <= kTipCells;
  const std::string who = bs == 1 ? "rank" : "ranks";
  for (std::int64_t i = 0; i < G; ++i)
    for (std::int64_t j = 0; j < G; ++j) {
      const Bytes b = cell[static_cast<std::size_t>(i * G + j)];
      if (b == 0) continue;
      body.add(static_cast<double>(left + j * cs), static_cast<double>(top + i * cs), cs, cs, step_colour(scale(static_cast<double>(b))),
               body.tips ? fmt("%s %s &#8594; %s: %s", who.c_str(), span(i, bs, p).c_str(), span(j, bs, p).c_str(), human_bytes(static_cast<double>(b)).c_str()) : "");
    }
  std::string axes;
  const std::int64_t every = ceil_div(G, 16);
  for (std::int64_t g = 0; g < G; g += every) {
    const double c = (g + 0.5) * cs;
    axes += fmt("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%lld</text>", left + c, top - 6, static_cast<long long>(g * bs));
    axes += fmt("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" dy=\"0.35em\">%lld</text>", left - 6, top + c, static_cast<long long>(g * bs));
  }
  const int width = left + std::max(size, 260) + 16, height = top + size + 64;
  std::string out = fmt("<svg id=\"heatmap\" data-cells=\"%lld\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
                        static_cast<long long>(body.count), width, height, width, height);
  out += fmt("<rect class=\"bg\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", left, top, size, size);
  out += body.str() + axes;
  out += fmt("<text class=\"axis\" x=\"%d\" y=\"12\">destination rank &#8594;</text>", left);
  out += fmt("<text class=\"axis\" transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"end\">source rank &#8594;</text>", top);
  out += legend(scale, left, top + size + 24, 240, bs == 1 ? "bytes per message" : "bytes per block", [](double v) { return human_bytes(v); });
  out += "</svg>";
  std::string caption = bs == 1 ? fmt("One cell per rank pair (%lld x %lld); zero pairs are blank.", static_cast<long long>(p), static_cast<long long>(p))
                                : fmt("%lld ranks, so ranks are grouped into blocks of %lld consecutive ranks (%lld x %lld cells); a cell holds "
                                      "the bytes its block sends; zero blocks are blank.",
                                      static_cast<long long>(p), static_cast<long long>(bs), static_cast<long long>(G), static_cast<long long>(G));
  if (!body.tips) caption += fmt(" Hover text is left out above %lld cells, to keep the page small.", static_cast<long long>(kTipCells));
  return out + "<p class=\"note\">" + caption + " Colour: logarithmic.</p>";
}

// Groups of consecutive phases: the columns of the Gantt chart and of the utilisation chart.
struct Columns {
  std::int64_t per = 1, count = 0;
  std::vector<double> seconds;   // the cost model's time of each column
};
Columns columns(const ReportData& d) {
  Columns c;
  c.per = ceil_div(std::max<std::int64_t>(d.phases, 1), kReportMaxColumns);
  c.count = ceil_div(d.phases, c.per);
  c.seconds.assign(static_cast<std::size_t>(c.count), 0);
  for (std::size_t k = 0; k < d.phase_seconds.size(); ++k) c.seconds[k / c.per] += d.phase_seconds[k];
  return c;
}

// ---- the Gantt chart ---------------------------------------------------------------------------
std::string gantt(const ReportData& d) {
  const Columns cols = columns(d);
  const std::int64_t p = d.p, rb = ceil_div(p, kReportMaxRows), R = ceil_div(p, rb), C = cols.count;
  if (C == 0) return "<p class=\"note\">The plan has no phases.</p><svg id=\"gantt\" data-bars=\"0\" width=\"1\" height=\"1\"></svg>";
  const CostOptions cost = report_cost(d);
  // Per cell (row, column): the busiest rank's time, the sum of its ranks' times, the largest
  // message, the bytes sent.
  const std::size_t cells = static_cast<std::size_t>(R * C);
  std::vector<double> busy(cells, 0), busy_sum(cells, 0);
  std::vector<Bytes> largest(cells, 0), sent(cells, 0);
  LogScale scale;
  for (std::size_t k = 0; k < d.sends.size();) {
    const ReportSend& s = d.sends[k];
    const std::int64_t col = s.phase / cols.per;
    const std::size_t cell = static_cast<std::size_t>((s.rank / rb) * C + col);
    double run = 0;
    for (; k < d.sends.size() && d.sends[k].rank == s.rank && d.sends[k].phase / cols.per == col; ++k) {
      run += port_seconds(d.sends[k].messages, d.sends[k].bytes, cost);
      largest[cell] = std::max(largest[cell], d.sends[k].max_message);
      sent[cell] += d.sends[k].bytes;
    }
    busy[cell] = std::max(busy[cell], run);
    busy_sum[cell] += run;
    scale.add(static_cast<double>(largest[cell]));
  }
  // A column lasts the cost model's time of its phases, or longer when a rank of it is busy longer
  // (several messages per rank in a phase: async plans).
  std::vector<double> col_seconds = cols.seconds;
  for (std::size_t cell = 0; cell < cells; ++cell) col_seconds[cell % C] = std::max(col_seconds[cell % C], busy[cell]);
  double total = 0;
  for (double s : col_seconds) total += s;
  const double W = 960, min_w = 2;
  std::vector<double> x(static_cast<std::size_t>(C + 1), 0), w(static_cast<std::size_t>(C), 0);
  for (std::int64_t c = 0; c < C; ++c) {
    w[c] = total > 0 ? std::max(min_w, W * col_seconds[c] / total) : W / C;
    x[c + 1] = x[c] + w[c];
  }
  const double rh = std::clamp(520.0 / static_cast<double>(R), 5.0, 20.0);
  const int left = 64, top = 28;
  const double plot_w = x[C], plot_h = rh * static_cast<double>(R);
  std::string body;
  for (std::int64_t c = 1; c < C; c += 2)
    body += fmt("<rect class=\"stripe\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%.1f\"/>", left + x[c], top, w[c], plot_h);
  Cells bars("b");
  std::int64_t nonzero = 0;
  for (std::size_t cell = 0; cell < cells; ++cell) nonzero += busy[cell] > 0 || sent[cell] > 0;
  bars.tips = nonzero <= kTipCells;
  const std::string who = rb == 1 ? "rank" : "ranks";
  // A row of one rank: its time. A row of a block of ranks: the block's mean time (the sum of its
  // ranks' times / its ranks), so that the chart shows how busy the ranks are, not only the
  // busiest; a dark tick marks the busiest rank's time.
  std::string ticks;
  for (std::int64_t r = 0; r < R; ++r) {
    const double ranks_in_row = static_cast<double>(std::min(p, (r + 1) * rb) - r * rb);
    const double y = top + r * rh + (rh > 6 ? 1 : 0), h = rh > 6 ? rh - 2 : rh;
    for (std::int64_t c = 0; c < C; ++c) {
      const std::size_t cell = static_cast<std::size_t>(r * C + c);
      if (sent[cell] == 0 && busy[cell] == 0) continue;
      const double mean = busy_sum[cell] / ranks_in_row;
      auto frac = [&](double s) { return col_seconds[c] > 0 ? std::min(1.0, s / col_seconds[c]) : 1.0; };
      const std::string when = cols.per == 1 ? "phase " + std::to_string(c) : "phases " + span(c, cols.per, d.phases);
      const std::string tip =
          !bars.tips ? ""
          : rb == 1  ? fmt("rank %s, %s: %s sent, largest message %s, busy %s of %s", span(r, rb, p).c_str(), when.c_str(),
                           human_bytes(static_cast<double>(sent[cell])).c_str(), human_bytes(static_cast<double>(largest[cell])).c_str(),
                           human_seconds(busy[cell]).c_str(), human_seconds(col_seconds[c]).c_str())
                     : fmt("ranks %s, %s: %s sent, largest message %s, mean busy %s, busiest rank %s of %s", span(r, rb, p).c_str(), when.c_str(),
                           human_bytes(static_cast<double>(sent[cell])).c_str(), human_bytes(static_cast<double>(largest[cell])).c_str(),
                           human_seconds(mean).c_str(), human_seconds(busy[cell]).c_str(), human_seconds(col_seconds[c]).c_str());
      bars.add(left + x[c], y, std::max(1.0, w[c] * frac(mean)), h, step_colour(scale(static_cast<double>(largest[cell]))), tip);
      if (rb > 1 && w[c] >= 4) ticks += fmt("M%.1f %.1fv%.1f", left + x[c] + std::max(1.0, w[c] * frac(busy[cell])) - 0.75, y, h);
    }
  }
  // Phase boundaries: a white line between columns wide enough to show it, so that equal bars of
  // neighbouring phases do not merge.
  std::string bounds;
  for (std::int64_t c = 1; c < C; ++c)
    if (w[c - 1] >= 4 && w[c] >= 4) bounds += fmt("M%.1f %dv%.1f", left + x[c], top, plot_h);
  std::string axes;
  const std::int64_t row_every = ceil_div(R, 24);
  for (std::int64_t r = 0; r < R; r += row_every)
    axes += fmt("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" dy=\"0.35em\">%lld</text>", left - 6, top + (r + 0.5) * rh, static_cast<long long>(r * rb));
  // Phase labels where they do not overlap (at least 28 px apart).
  double last = -1e9;
  for (std::int64_t c = 0; c < C; ++c) {
    const double cx = left + x[c] + w[c] / 2;
    if (cx - last < 28) continue;
    last = cx;
    axes += fmt("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%lld</text>", cx, top - 6, static_cast<long long>(c * cols.per));
  }
  const int width = left + static_cast<int>(plot_w) + 24, height = top + static_cast<int>(plot_h) + 70;
  std::string out = fmt("<svg id=\"gantt\" data-bars=\"%lld\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
                        static_cast<long long>(bars.count), width, height, width, height);
  out += fmt("<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\"/>", left, top, plot_w, plot_h);
  out += body + bars.str();
  if (!ticks.empty()) out += "<path class=\"mx\" d=\"" + ticks + "\"/>";
  if (!bounds.empty()) out += "<path class=\"pb\" d=\"" + bounds + "\"/>";
  out += axes;
  out += fmt("<text class=\"axis\" x=\"%d\" y=\"%.1f\">time &#8594; (%s in all; phase numbers on top)</text>", left, top + plot_h + 18,
             human_seconds(total).c_str());
  out += fmt("<text class=\"axis\" transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"end\">rank &#8594;</text>", top);
  out += legend(scale, left + plot_w - 240, top + plot_h + 36, 240, "largest message", [](double v) { return human_bytes(v); });
  out += "</svg>";
  std::string caption = fmt("%lld phase%s%s; column width: the cost model's time of the %s (tau + largest message or busiest link / "
                            "bandwidth), or its busiest rank's time when longer; at least %.0f px. ",
                            static_cast<long long>(d.phases), d.phases == 1 ? "" : "s",
                            cols.per == 1 ? "" : fmt(", in groups of %lld consecutive phases", static_cast<long long>(cols.per)).c_str(),
                            cols.per == 1 ? "phase" : "group", min_w);
  if (rb == 1)
    caption += "One row per rank. Bar width: the time the rank spends sending in the column (tau per message + bytes / bandwidth); "
               "colour: its largest message (logarithmic). Empty space is idle time; white lines separate phases.";
  else
    caption += fmt("Rows are blocks of %lld consecutive ranks. Bar width: the block's mean sending time in the column (its ranks' "
                   "times, tau per message + bytes / bandwidth, summed and divided by %lld), so a bar half as wide as its column "
                   "means the block's ranks are busy half the column on average; the dark tick marks the block's busiest rank. "
                   "Colour: the block's largest message (logarithmic). Empty space is idle time; white lines separate phases "
                   "where columns are wide enough.",
                   static_cast<long long>(rb), static_cast<long long>(rb));
  if (!bars.tips) caption += fmt(" Hover text is left out above %lld bars, to keep the page small.", static_cast<long long>(kTipCells));
  return out + "<p class=\"note\">" + caption + "</p>";
}

// ---- per-phase utilisation ---------------------------------------------------------------------
std::string utilisation(const ReportData& d) {
  const Columns cols = columns(d);
  const std::int64_t C = cols.count;
  if (C == 0) return "";
  const double W = 960, H = 140, bw = W / static_cast<double>(C);
  const int left = 64, top = 16;
  std::string body, line;
  double weighted = 0, capacity = 0;
  for (std::int64_t c = 0; c < C; ++c) {
    double moved = 0, cap = 0, senders = 0, link = 0, largest = 0;
    for (std::int64_t k = c * cols.per; k < std::min<std::int64_t>(d.phases, (c + 1) * cols.per); ++k) {
      moved += static_cast<double>(d.phase_bytes[k]);
      // A sender moves at most its port's share in the phase's time, which is at least the time of
      // the most one sender sends: fill <= 100 % whatever the plan kind (an async plan is one
      // phase of many messages per sender).
      cap += static_cast<double>(d.phase_senders[k]) * static_cast<double>(d.phase_max_sent[k]);
      senders = std::max(senders, static_cast<double>(d.phase_senders[k]));
      link = std::max(link, static_cast<double>(d.phase_max_link[k]));
      largest = std::max(largest, static_cast<double>(d.phase_max_message[k]));
    }
    weighted += moved, capacity += cap;
    const double fill = cap > 0 ? moved / cap : 0, active = senders / d.p;
    const std::string when = cols.per == 1 ? "phase " + std::to_string(c) : "phases " + span(c, cols.per, d.phases);
    std::string tip = fmt("%s: %s moved, %.0f senders (%.0f%%), largest message %s, fill %.2f", when.c_str(), human_bytes(moved).c_str(), senders,
                          100 * active, human_bytes(largest).c_str(), fill);
    if (d.topology) tip += ", busiest link " + human_bytes(link);
    body += fmt("<rect class=\"u\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" data-t=\"%s\"/>", left + c * bw + bw * 0.1, top + H * (1 - fill),
                std::max(0.5, bw * 0.8), H * fill, tip.c_str());
    line += fmt("%s%.1f,%.1f", c ? " " : "", left + (c + 0.5) * bw, top + H * (1 - active));
    if (C == 1) body += fmt("<circle class=\"active\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>", left + 0.5 * bw, top + H * (1 - active));
  }
  std::string out = fmt("<svg id=\"utilisation\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
                        left + static_cast<int>(W) + 24, top + static_cast<int>(H) + 40, left + static_cast<int>(W) + 24, top + static_cast<int>(H) + 40);
  for (int g = 0; g <= 4; ++g) {
    const double y = top + H * g / 4;
    out += fmt("<line class=\"grid\" x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" dy=\"0.35em\">%d%%</text>",
               left, left + W, y, y, left - 6, y, 100 - 25 * g);
  }
  out += body;
  out += "<polyline class=\"active\" points=\"" + line + "\"/>";
  out += fmt("<g class=\"key\"><rect class=\"u\" x=\"%d\" y=\"%.1f\" width=\"12\" height=\"10\"/><text x=\"%d\" y=\"%.1f\">fill: bytes moved / (senders "
             "&#215; most one sender sends)</text><line class=\"active\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/><text x=\"%d\" y=\"%.1f\">senders / p</text></g>",
             left, top + H + 16, left + 18, top + H + 25, left + 360, left + 380, top + H + 21, top + H + 21, left + 386, top + H + 25);
  out += "</svg>";
  return out + fmt("<p class=\"note\">Over the whole plan the phases move %.1f%% of what their senders could in the time the busiest "
                   "sender of each phase needs (100%%: every sender sends as much as the phase's busiest).</p>",
                   capacity > 0 ? 100 * weighted / capacity : 100.0);
}

// ---- link loads --------------------------------------------------------------------------------
// The links a machine has: a mesh has no wrap-around links and a torus axis of 2 uses one
// direction each way, though their ids are reserved (Topology::link_count counts ids). Counted
// as the distinct links of the routes between neighbouring nodes.
std::int64_t existing_links(const Topology& t) {
  if (t.kind() != Topology::Kind::mesh && t.kind() != Topology::Kind::torus) return t.link_count();
  const auto& dims = t.dims();
  std::vector<bool> seen(static_cast<std::size_t>(t.link_count()), false);
  std::vector<Link> route;
  std::int64_t count = 0, stride = 1;
  for (std::size_t k = 0; k < dims.size(); stride *= dims[k], ++k)
    for (std::int64_t n = 0; n < t.nodes(); ++n)
      for (int dir : {+1, -1}) {
        const std::int64_t at = (n / stride) % dims[k], to = at + dir;
        if ((to < 0 || to >= dims[k]) && t.kind() == Topology::Kind::mesh) continue;
        const std::int64_t m = n + (((to + dims[k]) % dims[k]) - at) * stride;
        if (m == n) continue;
        t.route_nodes(Node{static_cast<Rank>(n)}, Node{static_cast<Rank>(m)}, route);
        for (Link l : route)
          if (!seen[l.index()]) seen[l.index()] = true, ++count;
      }
  return count;
}

// Every link of the machine by its load: how many are idle and how many carry bytes in each
// power-of-two range, so that no link is left out (the list below it names only the busiest).
std::string link_histogram(const ReportData& d, std::int64_t existing) {
  std::vector<std::int64_t> bins(65, 0);
  std::int64_t used = 0;
  for (Bytes b : d.link_loads)
    if (b > 0) ++used, ++bins[static_cast<std::size_t>(64 - __builtin_clzll(b))];
  const std::int64_t idle = std::max<std::int64_t>(0, existing - used);
  std::size_t lo = 64, hi = 0;
  for (std::size_t k = 1; k < bins.size(); ++k)
    if (bins[k]) lo = std::min(lo, k), hi = std::max(hi, k);
  std::vector<std::pair<std::string, std::int64_t>> rows{{"idle", idle}};
  for (std::size_t k = lo; k <= hi && hi > 0; ++k)
    rows.emplace_back(human_bytes(std::ldexp(1.0, static_cast<int>(k) - 1)) + " .. " + human_bytes(std::ldexp(1.0, static_cast<int>(k))), bins[k]);
  std::int64_t most = 1;
  for (const auto& r : rows) most = std::max(most, r.second);
  const int left = 200, bh = 14, height = static_cast<int>(rows.size()) * bh + 10;
  std::string out = fmt("<svg id=\"linkhist\" data-links=\"%lld\" width=\"760\" height=\"%d\" viewBox=\"0 0 760 %d\">",
                        static_cast<long long>(idle + used), height, height);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double w = 480.0 * static_cast<double>(rows[k].second) / static_cast<double>(most), y = 4 + static_cast<double>(k) * bh;
    out += fmt("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" dy=\"0.8em\">%s</text><rect class=\"u\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" "
               "height=\"%d\" data-t=\"%s: %lld link%s\"/><text x=\"%.1f\" y=\"%.1f\" dy=\"0.8em\">%lld</text>",
               left - 6, y, rows[k].first.c_str(), left, y + 1, std::max(rows[k].second ? 1.0 : 0.0, w), bh - 3, rows[k].first.c_str(),
               static_cast<long long>(rows[k].second), rows[k].second == 1 ? "" : "s", left + w + 6, y, static_cast<long long>(rows[k].second));
  }
  return out + "</svg><p class=\"note\">Every link of the machine by the bytes it carries over the whole exchange (power-of-two ranges).</p>";
}

// Why the machine costs time, in a sentence or two: which links the messages of a phase share, and
// how much longer that makes the phases than their largest messages.
std::string topology_cost(const ReportData& d) {
  std::int64_t busy_phases = 0, shared_phases = 0;
  double actual = 0;
  for (std::size_t k = 0; k < d.phase_pieces.size(); ++k) {
    if (d.phase_pieces[k] == 0) continue;
    ++busy_phases;
    shared_phases += d.phase_link_sharing[k] > 1;
    actual += d.phase_seconds[k];
  }
  const double plain = synchronous_cost_s(d.phase_max_message, report_cost(d));   // every phase as long as its largest message
  const double lb = d.lower_bound_s;
  if (d.most_shared_count <= 1)
    return fmt("<p id=\"topocost\">No link carries two messages of one phase: the machine adds nothing to the phase times (%s in all). "
               "It enters the lower bound (%s) only through its busiest link over the whole exchange.</p>",
               human_seconds(actual).c_str(), human_seconds(lb).c_str());
  return fmt("<p id=\"topocost\">Why the machine costs time: messages of one phase whose routes share a link share its bandwidth, so a "
             "phase lasts as long as its busiest link. In %lld of %lld phases a link carries two messages or more, at most %lld "
             "(<code>%s</code> in phase %u). With every phase as long as its largest message the phases would take %s; with their "
             "busiest links they take %s (%+.0f %%). The lower bound (%s) spreads each link's bytes over the whole exchange, so this "
             "sharing inside phases is what raises estimate / bound.</p>",
             static_cast<long long>(shared_phases), static_cast<long long>(busy_phases), static_cast<long long>(d.most_shared_count),
             esc(d.topology->link_name(d.most_shared_link)).c_str(), d.most_shared_phase, human_seconds(plain).c_str(),
             human_seconds(actual).c_str(), plain > 0 ? 100 * (actual / plain - 1) : 0.0, human_seconds(lb).c_str());
}

std::string links(const ReportData& d) {
  const Topology& t = *d.topology;
  std::int64_t used = 0;
  Bytes busiest = 0;
  double sum = 0;
  LogScale scale;
  for (Bytes b : d.link_loads)
    if (b > 0) ++used, busiest = std::max(busiest, b), sum += static_cast<double>(b), scale.add(static_cast<double>(b));
  const double mu = 1.0 / d.cost.bandwidth_Bps;
  const std::int64_t existing = existing_links(t);
  std::string out = fmt("<p>Topology <code>%s</code>: %lld links, %lld carry traffic; busiest link %s (%s at the link bandwidth), mean over "
                        "used links %s. Busiest link of each phase: hover the utilisation bars.</p>",
                        esc(t.spec()).c_str(), static_cast<long long>(existing), static_cast<long long>(used),
                        human_bytes(static_cast<double>(busiest)).c_str(), human_seconds(static_cast<double>(busiest) * mu).c_str(),
                        human_bytes(used ? sum / used : 0).c_str());
  out += topology_cost(d);
  out += link_histogram(d, existing);
  const auto& dims = t.dims();
  const bool grid = (t.kind() == Topology::Kind::mesh || t.kind() == Topology::Kind::torus) && dims.size() <= 2 && t.nodes() <= 256;
  if (grid) {
    const std::int64_t A = dims[0], B = dims.size() > 1 ? dims[1] : 1;
    const double sp = std::clamp(560.0 / static_cast<double>(std::max(A, B)), 16.0, 64.0);
    const int left = 40, top = 30;
    const int width = left * 2 + static_cast<int>(sp * (A - 1)) + 40, height = top * 2 + static_cast<int>(sp * (B - 1)) + 60;
    std::string body;
    std::vector<Link> route;
    std::vector<bool> drawn(d.link_loads.size(), false);
    auto pos = [&](std::int64_t n, double& px, double& py) { px = left + 20 + sp * (n % A), py = top + sp * (n / A); };
    std::int64_t drawn_links = 0;
    for (std::int64_t n = 0; n < A * B; ++n)
      for (int dim = 0; dim < static_cast<int>(dims.size()); ++dim)
        for (int dir : {+1, -1}) {
          const std::int64_t x = n % A, y = n / A, len = dim == 0 ? A : B, at = dim == 0 ? x : y;
          std::int64_t to = at + dir;
          const bool wrap = to < 0 || to >= len;
          if (wrap && (t.kind() == Topology::Kind::mesh || len < 3)) continue;
          to = (to + len) % len;
          const std::int64_t m = dim == 0 ? y * A + to : to * A + x;
          t.route_nodes(Node{static_cast<Rank>(n)}, Node{static_cast<Rank>(m)}, route);
          if (route.size() != 1 || drawn[route[0].index()]) continue;
          drawn[route[0].index()] = true;
          ++drawn_links;
          const Bytes load = d.link_loads[route[0].index()];
          double x1, y1, x2, y2;
          pos(n, x1, y1);
          pos(m, x2, y2);
          if (wrap) {   // a torus wrap link: a stub leaving the edge
            x2 = x1 + (dim == 0 ? dir * sp * 0.45 : 0), y2 = y1 + (dim == 1 ? dir * sp * 0.45 : 0);
          }
          // The two directions of a cable side by side: offset to the right of the direction.
          const double off = 2.2, dx = x2 - x1, dy = y2 - y1, l = std::hypot(dx, dy);
          const double ox = -dy / l * off, oy = dx / l * off;
          body += fmt("<line class=\"l%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"%s data-t=\"%s: %s\"/>", load ? "" : " idle", x1 + ox, y1 + oy,
                      x2 + ox, y2 + oy, load ? (" stroke=\"" + colour(scale(static_cast<double>(load))) + "\"").c_str() : "",
                      esc(t.link_name(route[0])).c_str(), human_bytes(static_cast<double>(load)).c_str());
        }
    for (std::int64_t n = 0; n < A * B; ++n) {
      double px, py;
      pos(n, px, py);
      body += fmt("<circle class=\"node\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" data-t=\"node %lld\"/>", px, py, std::min(5.0, sp / 6), static_cast<long long>(n));
    }
    out += fmt("<svg id=\"links\" data-links=\"%lld\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">",
               static_cast<long long>(drawn_links), std::max(width, 300), height, std::max(width, 300), height);
    out += body;
    out += legend(scale, left, height - 34, 240, "bytes per link (whole exchange)", [](double v) { return human_bytes(v); });
    out += "</svg><p class=\"note\">Nodes on the grid, each cable drawn as its two directed links side by side (each to the right of its direction); "
           "grey: unused. Torus wrap-around links are stubs at the edges.</p>";
    return out;
  }
  // Any other machine: the most loaded links, by name.
  std::vector<std::int64_t> order;
  for (std::size_t l = 0; l < d.link_loads.size(); ++l)
    if (d.link_loads[l] > 0) order.push_back(static_cast<std::int64_t>(l));
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return d.link_loads[a] > d.link_loads[b]; });
  if (order.size() > 32) order.resize(32);
  const int left = 260, bh = 14;
  const int height = static_cast<int>(order.size()) * bh + 20;
  out += fmt("<svg id=\"links\" data-links=\"%zu\" width=\"900\" height=\"%d\" viewBox=\"0 0 900 %d\">", order.size(),
             height, height);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Bytes load = d.link_loads[order[k]];
    const double w = busiest ? 560.0 * static_cast<double>(load) / static_cast<double>(busiest) : 0;
    const double y = 4 + static_cast<double>(k) * bh;
    out += fmt("<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" dy=\"0.8em\">%s</text><rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
               "data-t=\"%s: %s\"/><text x=\"%.1f\" y=\"%.1f\" dy=\"0.8em\">%s</text>",
               left - 6, y, esc(t.link_name(Link{order[k]})).c_str(), left, y + 1, std::max(1.0, w), bh - 3, colour(scale(static_cast<double>(load))).c_str(),
               esc(t.link_name(Link{order[k]})).c_str(), human_bytes(static_cast<double>(load)).c_str(), left + w + 6, y,
               human_bytes(static_cast<double>(load)).c_str());
  }
  out += "</svg><p class=\"note\">The most loaded links (at most 32), bytes over the whole exchange.</p>";
  return out;
}

// ---- the cost table ----------------------------------------------------------------------------
std::string costs(const ReportData& d) {
  const CostOptions& c = d.cost;
  const double lb = d.lower_bound_s;
  std::string out = "<table class=\"cost\"><tr><th>plan</th><th>phases</th><th>estimate</th><th>bound</th><th>estimate / bound</th></tr>";
  out += fmt("<tr><td>%s</td><td>%u</td><td>%s</td><td>%s</td><td>%.3f</td></tr></table>", esc(d.manifest->strategy).c_str(), d.phases,
             human_seconds(d.estimate_s).c_str(), human_seconds(lb).c_str(), lb > 0 ? d.estimate_s / lb : 1.0);
  // The manifest records the network model the estimate simulated (ir/cost_model.h).
  const auto opt = [&](const char* key) { auto it = d.manifest->options.find(key); return it == d.manifest->options.end() ? nullptr : &*it; };
  const auto* network = opt("network");
  const auto* overhead = opt("overhead_s");
  if (!d.machine.empty())
    out += fmt("<p class=\"note\" id=\"machine\">Priced on the machine file <code>%s</code> (network %s, tau %s, overhead %s, bandwidth %s/s); "
               "the plan was made with tau %s and bandwidth %s/s, and estimated %s then. The candidates below keep the estimates "
               "they were chosen by.</p>",
               esc(d.machine).c_str(), esc(to_string(c.network.model)).c_str(), human_seconds(c.tau_s).c_str(),
               human_seconds(sim_overhead_s(c.tau_s, c.network)).c_str(), human_bytes(c.bandwidth_Bps).c_str(),
               human_seconds(d.manifest->cost.tau_s).c_str(), human_bytes(d.manifest->cost.bandwidth_Bps).c_str(),
               human_seconds(d.manifest->cost.estimate_s).c_str());
  else if (network && network->is_string() && overhead && overhead->is_number())
    out += fmt("<p class=\"note\">Estimate: the plan simulated on the <code>%s</code> network model (tau %s a message = latency + 2 x overhead, "
               "overhead %s, bandwidth %s/s). The charts below use the loosely "
               "synchronous model instead: each phase lasts tau + its largest message or busiest link / bandwidth.</p>",
               esc(network->get<std::string>()).c_str(), human_seconds(c.tau_s).c_str(), human_seconds(overhead->get<double>()).c_str(),
               human_bytes(c.bandwidth_Bps).c_str());
  else
    out += fmt("<p class=\"note\">Cost model: tau %s per message, bandwidth %s/s.</p>", human_seconds(c.tau_s).c_str(), human_bytes(c.bandwidth_Bps).c_str());
  // The bound (docs/FORMAT.md section 5.2): from the matrix and the machine alone.
  out += fmt("<p class=\"note\" id=\"bound\">Bound: no plan that sends every byte directly to its destination beats %s on this machine "
             "(set by the %s term); no plan at all, relaying ones included, beats %s (%s). This plan %s, so its bound is %s "
             "(docs/FORMAT.md, section 5.2).</p>",
             human_seconds(d.bound.direct_s).c_str(), d.bound.binding(false), human_seconds(d.bound.relay_s).c_str(), d.bound.binding(true),
             d.relays ? "relays" : "sends directly", human_seconds(d.lower_bound_s).c_str());
  if (!d.candidates.empty()) out += "<p class=\"note\">The candidates of <code>--strategy auto</code> are listed below.</p>";
  return out;
}

// The candidates --strategy auto planned, a section of the page's full width so that the table
// is whole at any window width the page supports.
std::string candidates(const ReportData& d) {
  const double lb = d.bound.direct_s;   // one bound for every row: a relaying candidate below 1 beats every direct plan
  std::string out;
  double worst = 0;
  for (const ReportCandidate& r : d.candidates)
    if (r.skipped.empty()) worst = std::max(worst, r.estimate_s);
  out += "<table class=\"cost\" id=\"candidates\"><tr><th></th><th>candidate</th><th>phases</th><th>largest message</th>"
         "<th>estimate</th><th>est. / bound</th><th></th></tr>";
  for (const ReportCandidate& r : d.candidates) {
    if (!r.skipped.empty()) {
      out += fmt("<tr class=\"skipped\"><td></td><td>%s</td><td colspan=\"5\">skipped: %s</td></tr>", esc(r.name).c_str(), esc(r.skipped).c_str());
      continue;
    }
    out += fmt("<tr%s><td>%s</td><td>%s</td><td>%u</td><td>%s</td><td>%s</td><td>%.3f</td><td class=\"barcell\"><span class=\"bar\" "
               "style=\"width:%.0f%%\"></span></td></tr>",
               r.chosen ? " class=\"chosen\"" : "", r.chosen ? "&#9733;" : "", esc(r.name).c_str(), r.phases,
               human_bytes(static_cast<double>(r.max_message)).c_str(), human_seconds(r.estimate_s).c_str(), lb > 0 ? r.estimate_s / lb : 1.0,
               worst > 0 ? 100 * r.estimate_s / worst : 0.0);
  }
  return out + "</table><p class=\"note\">The candidates --strategy auto planned (recorded in the plan), the chosen one starred; "
               "est. / bound divides by the bound of plans that send every byte directly, so a relaying candidate below 1.000 beats "
               "every such plan.</p>";
}

std::string summary(const ReportData& d) {
  const Manifest& m = *d.manifest;
  const TrafficStats& s = d.stats;
  std::string opts;
  auto opt = [&](const char* key, const std::string& value) { opts += fmt("<span class=\"opt\">%s = %s</span> ", key, esc(value).c_str()); };
  const PlanContract& c = m.contract;
  if (!c.chosen.empty()) opt("chosen", c.chosen);
  for (const char* key : {"algorithm", "variant", "method", "chunk"})
    if (auto it = m.options.find(key); it != m.options.end()) opt(key, it->is_string() ? it->get<std::string>() : it->dump());
  opt("timing", c.timing == Timing::async ? "async" : "synchronous");
  opt("contention", to_string(c.contention));
  if (!c.topology.empty()) opt("topology", c.topology);
  auto item = [](const char* k, const std::string& v) { return fmt("<div><dt>%s</dt><dd>%s</dd></div>", k, v.c_str()); };
  std::string out = "<dl class=\"summary\">";
  out += item("ranks p", std::to_string(d.p));
  out += item("messages", fmt("%lld + %lld local", static_cast<long long>(s.messages), static_cast<long long>(s.local_copies)));
  out += item("bytes", human_bytes(static_cast<double>(s.total_bytes)) + " + " + human_bytes(static_cast<double>(s.local_bytes)) + " local");
  out += item("h (max fan-in/out)", std::to_string(s.h));
  out += item("t (max bytes per rank)", human_bytes(static_cast<double>(s.t)));
  out += item("largest message", human_bytes(static_cast<double>(s.max_message)));
  out += item("phases", std::to_string(d.phases));
  out += item("estimate / bound", fmt("%s / %s", human_seconds(m.cost.estimate_s).c_str(), human_seconds(m.cost.lower_bound_s).c_str()));
  out += item("staging (max)", human_bytes(static_cast<double>(m.staging_bytes_max)));
  out += "</dl>";
  out += fmt("<p>strategy <b>%s</b> %s</p><p class=\"note\">matrix %s &#183; %s</p>", esc(m.strategy).c_str(), opts.c_str(), esc(m.matrix_fingerprint).c_str(),
             esc(m.planner).c_str());
  return out;
}

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f4f5f7;color:#1d232b}
main{max-width:1140px;margin:0 auto;padding:18px 24px 40px}
h1{font-size:21px;margin:6px 0 2px}h2{font-size:16px;margin:0 0 8px}
section{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:14px 18px;margin:14px 0;overflow-x:auto}
.row{display:flex;gap:14px;flex-wrap:wrap}.row>section{flex:1 1 420px;margin:0}
dl.summary{display:flex;flex-wrap:wrap;gap:8px 26px;margin:8px 0}dl.summary div{min-width:110px}
dt{font-size:11px;color:#667;text-transform:uppercase;letter-spacing:.04em}dd{margin:0;font-size:17px;font-weight:600}
.note{font-size:12px;color:#556;margin:6px 0 0}.opt{background:#eef1f5;border-radius:4px;padding:1px 6px;font-size:12px;margin-right:4px}
svg{display:block;font-size:10px;fill:#333;max-width:100%;height:auto}path.mx{stroke:#1d232b;stroke-width:1.5;fill:none}path.pb{stroke:#fff;stroke-width:1;fill:none}svg text.axis{font-size:11px;fill:#556}
rect.bg{fill:#f7f7f9;stroke:#ccd}rect.frame{fill:#fbfbfc;stroke:#ccd}rect.stripe{fill:#eef0f3}
rect.u{fill:#3b7dd8}polyline.active,line.active{fill:none;stroke:#e0663a;stroke-width:1.6}circle.active{fill:#e0663a}line.grid{stroke:#e3e6ea}
line.l{stroke-width:3;stroke-linecap:round}line.idle{stroke:#d5d8dd}circle.node{fill:#fff;stroke:#333}
rect[data-t]:hover{stroke:#000;stroke-width:1}
table.cost{border-collapse:collapse;font-size:12.5px;margin:4px 0 8px}table.cost td,table.cost th{padding:3px 7px;text-align:right;border-bottom:1px solid #eee}
table.cost th{font-weight:600;color:#445}table.cost td{white-space:nowrap}table.cost td:nth-child(2),table.cost th:nth-child(2){text-align:left}
tr.chosen{background:#fff6d6;font-weight:600}tr.skipped{color:#889}tr.skipped td{text-align:left;white-space:normal}
td.barcell{width:60px;padding-left:4px}span.bar{display:block;height:9px;background:#3b7dd8;border-radius:2px}
section>p{font-size:14px}code{font-size:12px}#tip{position:absolute;display:none;background:#1d232bee;color:#fff;font-size:12px;padding:4px 7px;border-radius:4px;pointer-events:none;max-width:420px}
)";

// Hover text, and the self-check the headless-browser test reads (tests/report/).
const char* kScript = R"(
(function(){
var tip=document.getElementById('tip');
document.addEventListener('mousemove',function(e){var t=e.target&&e.target.closest?e.target.closest('[data-t]'):null;
if(!t){tip.style.display='none';return;}tip.textContent=t.getAttribute('data-t');tip.style.left=(e.pageX+14)+'px';tip.style.top=(e.pageY+14)+'px';tip.style.display='block';});
var bad=[],hm=document.getElementById('heatmap'),g=document.getElementById('gantt');
function count(sel){var n=0;document.querySelectorAll(sel).forEach(function(e){n+=e.tagName==='path'?(e.getAttribute('d').match(/M/g)||[]).length:1;});return n;}
var cells=count('#heatmap .c'),bars=count('#gantt .b');
if(!hm||cells!==+hm.getAttribute('data-cells'))bad.push('heatmap cells '+cells);
if(!g||bars!==+g.getAttribute('data-bars'))bad.push('gantt bars '+bars);
document.querySelectorAll('[src],[href]').forEach(function(e){bad.push('external reference '+(e.getAttribute('src')||e.getAttribute('href')));});
document.querySelectorAll('svg').forEach(function(s){var r=s.getBoundingClientRect();if(!(r.width>0&&r.height>0))bad.push('empty '+s.id);});
var de=document.documentElement;if(de.scrollWidth>de.clientWidth+1)bad.push('page '+de.scrollWidth+' px wide in a '+de.clientWidth+' px window');
document.querySelectorAll('section').forEach(function(s){if(s.scrollWidth>s.clientWidth+1){var h=s.querySelector('h2');bad.push((h?h.textContent:'a section')+' scrolls sideways');}});
document.body.setAttribute('data-window-width',de.clientWidth);document.body.setAttribute('data-page-height',Math.ceil(de.scrollHeight));
document.body.setAttribute('data-heatmap-cells',cells);document.body.setAttribute('data-gantt-bars',bars);
document.body.setAttribute('data-validated',bad.length?'fail: '+bad.join('; '):'ok');
})();
)";

}  // namespace

std::string render_report(const ReportData& d) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">";
  out += "<title>commfit report: " + esc(d.plan_name) + "</title><style>" + kStyle + "</style></head><body><main>\n";
  out += "<h1>commfit report: " + esc(d.plan_name) + "</h1>\n<section>" + summary(d) + "</section>\n";
  out += "<div class=\"row\"><section><h2>Communication matrix</h2>" + heatmap(d) + "</section>\n";
  out += "<section><h2>Cost</h2>" + costs(d) + "</section></div>\n";
  if (!d.candidates.empty()) out += "<section><h2>Candidates of --strategy auto</h2>" + candidates(d) + "</section>\n";
  out += "<section><h2>Phases (Gantt chart)</h2>" + gantt(d) + "</section>\n";
  out += "<section><h2>Per-phase utilisation</h2>" + utilisation(d) + "</section>\n";
  if (d.topology) out += "<section><h2>Link loads</h2>" + links(d) + "</section>\n";
  out += "</main><div id=\"tip\"></div><script>" + std::string(kScript) + "</script></body></html>\n";
  return out;
}

CostOptions report_cost(const ReportData& d) {
  return d.cost;
}

}  // namespace commfit

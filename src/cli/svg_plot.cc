#include "cli/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace gangway {
namespace {

constexpr double kWidth = 480;
constexpr double kHeight = 280;
constexpr double kLeft = 62;
constexpr double kRight = 12;
constexpr double kTop = 28;
constexpr double kBottom = 44;
constexpr double kLegendRow = 15;

struct Range {
  double low = 0;
  double high = 1;
};

// Maps data to pixels inside the plot area.
class Frame {
 public:
  Frame(Range x, Range y, bool log_x, double height = kHeight)
      : x_(x), y_(y), log_x_(log_x), bottom_(height - kBottom) {}
  double px(double x) const {
    const double lo = log_x_ ? std::log10(x_.low) : x_.low;
    const double hi = log_x_ ? std::log10(x_.high) : x_.high;
    const double v = log_x_ ? std::log10(std::max(x, x_.low)) : x;
    return kLeft + (v - lo) / (hi - lo) * (kWidth - kLeft - kRight);
  }
  double py(double y) const {
    const double clamped = std::clamp(y, y_.low, y_.high);
    return bottom_ - (clamped - y_.low) / (y_.high - y_.low) * (bottom_ - kTop);
  }
  double bottom() const { return bottom_; }
  const Range& x() const { return x_; }
  const Range& y() const { return y_; }
  bool log_x() const { return log_x_; }

 private:
  Range x_, y_;
  bool log_x_;
  double bottom_;
};

std::string number(double value) {
  if (value == 0) return "0";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e6) return fmt::format("{:.3g}", value);
  if (magnitude >= 100) return fmt::format("{:.0f}", value);
  if (magnitude >= 1) return fmt::format("{:.3g}", value);
  return fmt::format("{:.2g}", value);
}

// About `count` round ticks over the range: steps of 1, 2 or 5 times a power of ten.
std::vector<double> linear_ticks(Range range, int count) {
  const double span = range.high - range.low;
  if (!(span > 0)) return {range.low};
  const double raw = span / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  }
  std::vector<double> ticks;
  for (double t = std::ceil(range.low / step) * step; t <= range.high + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

std::vector<double> log_ticks(Range range) {
  std::vector<double> ticks;
  const int first = static_cast<int>(std::floor(std::log10(range.low)));
  const int last = static_cast<int>(std::ceil(std::log10(range.high)));
  const bool sparse = last - first > 4;
  for (int e = first; e <= last; ++e) {
    for (const double m : {1.0, 2.0, 5.0}) {
      if (sparse && m != 1.0) continue;
      const double t = m * std::pow(10.0, e);
      if (t >= range.low * (1 - 1e-9) && t <= range.high * (1 + 1e-9)) ticks.push_back(t);
    }
  }
  return ticks;
}

Range padded_range(double low, double high, bool from_zero) {
  if (!std::isfinite(low) || !std::isfinite(high)) return {0, 1};
  if (from_zero) low = std::min(low, 0.0);
  if (high <= low) high = low + (low == 0 ? 1 : std::fabs(low) * 0.1);
  return {low, high};
}

std::string open_svg(const PlotAxes& axes, double legend_height, size_t series,
                     double height = kHeight) {
  return fmt::format(
      "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" data-series=\"{2}\" role=\"img\">"
      "<title>{3}</title><text class=\"title\" x=\"{4}\" y=\"16\">{3}</text>",
      kWidth, height + legend_height, series, escape_html(axes.title), kLeft);
}

std::string draw_axes(const Frame& frame, const PlotAxes& axes, bool y_percent = false) {
  std::string svg;
  const double right = kWidth - kRight;
  svg += fmt::format("<rect class=\"area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", kLeft,
                     kTop, right - kLeft, frame.bottom() - kTop);
  const std::vector<double> x_ticks =
      frame.log_x() ? log_ticks(frame.x()) : linear_ticks(frame.x(), 6);
  for (const double t : x_ticks) {
    const double x = frame.px(t);
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>"
        "<text class=\"tick\" x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>",
        x, kTop, frame.bottom(), frame.bottom() + 13, number(t));
  }
  for (const double t : linear_ticks(frame.y(), 5)) {
    const double y = frame.py(t);
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
        "<text class=\"tick\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>",
        kLeft, y, right, kLeft - 4, y + 3, y_percent ? number(100 * t) + "%" : number(t));
  }
  svg += fmt::format(
      "<text class=\"label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>",
      (kLeft + right) / 2, frame.bottom() + 28, escape_html(axes.x_label));
  svg += fmt::format(
      "<text class=\"label\" transform=\"translate(13,{:.1f}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text>",
      (kTop + frame.bottom()) / 2, escape_html(axes.y_label));
  if (axes.y_reference) {
    const double y = frame.py(*axes.y_reference);
    svg += fmt::format(
        "<line class=\"reference\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
        "<text class=\"tick\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>",
        kLeft, y, right, right - 2, y - 3, escape_html(axes.y_reference_label));
  }
  return svg;
}

// Legend entries in rows under the plot, as many per row as fit.
std::string legend(const std::vector<std::pair<std::string, std::string>>& entries, double top) {
  std::string svg;
  double x = kLeft;
  double y = top;
  for (const auto& [label, color] : entries) {
    const double width = 22 + 6.2 * static_cast<double>(label.size());
    if (x + width > kWidth - kRight && x > kLeft) {
      x = kLeft;
      y += kLegendRow;
    }
    svg += fmt::format(
        "<rect x=\"{0:.1f}\" y=\"{1:.1f}\" width=\"10\" height=\"10\" fill=\"{2}\"/>"
        "<text class=\"legend\" x=\"{3:.1f}\" y=\"{4:.1f}\">{5}</text>",
        x, y - 9, color, x + 14, y, escape_html(label));
    x += width;
  }
  return svg;
}

double legend_height(const std::vector<std::pair<std::string, std::string>>& entries) {
  double x = kLeft;
  int rows = entries.empty() ? 0 : 1;
  for (const auto& entry : entries) {
    const double width = 22 + 6.2 * static_cast<double>(entry.first.size());
    if (x + width > kWidth - kRight && x > kLeft) {
      x = kLeft;
      ++rows;
    }
    x += width;
  }
  return rows * kLegendRow;
}

}  // namespace

const std::string& series_color(size_t index) {
  static const std::array<std::string, 10> kPalette = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                       "#9467bd", "#8c564b", "#e377c2", "#17becf",
                                                       "#7f7f7f", "#bcbd22"};
  return kPalette[index % kPalette.size()];
}

std::string escape_html(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string line_chart_svg(const PlotAxes& axes, const std::vector<PlotSeries>& series) {
  double x_low = std::numeric_limits<double>::infinity();
  double x_high = -x_low;
  double y_low = x_low;
  double y_high = -x_low;
  for (const PlotSeries& s : series) {
    for (const auto& [x, y] : s.points) {
      if (axes.log_x && !(x > 0)) continue;
      x_low = std::min(x_low, x);
      x_high = std::max(x_high, x);
      y_low = std::min(y_low, y);
      y_high = std::max(y_high, y);
    }
  }
  if (axes.y_reference) {
    y_low = std::min(y_low, *axes.y_reference);
    y_high = std::max(y_high, *axes.y_reference);
  }
  Range x_range =
      padded_range(axes.x_min.value_or(x_low), axes.x_max.value_or(x_high), !axes.log_x);
  if (axes.log_x) {
    if (!(x_range.low > 0)) x_range.low = 1e-3;
    if (x_range.high <= x_range.low) x_range.high = x_range.low * 10;
  }
  const Range y_range = padded_range(axes.y_min.value_or(y_low), axes.y_max.value_or(y_high), true);
  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t i = 0; i < series.size(); ++i) entries.emplace_back(series[i].label, series_color(i));
  const double legend_rows = legend_height(entries);
  const Frame frame(x_range, y_range, axes.log_x);
  std::string svg = open_svg(axes, legend_rows, series.size());
  svg += draw_axes(frame, axes);
  for (size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    const std::string& color = series_color(i);
    if (s.markers) {
      for (const auto& [x, y] : s.points) {
        if (axes.log_x && !(x > 0)) continue;
        svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>", frame.px(x),
                           frame.py(y), color);
      }
      continue;
    }
    std::string path;
    bool first = true;
    for (const auto& [x, y] : s.points) {
      if (axes.log_x && !(x > 0)) continue;
      if (first) {
        path += fmt::format("M{:.1f},{:.1f}", frame.px(x), frame.py(y));
      } else if (s.step) {
        path += fmt::format("H{:.1f}V{:.1f}", frame.px(x), frame.py(y));
      } else {
        path += fmt::format("L{:.1f},{:.1f}", frame.px(x), frame.py(y));
      }
      first = false;
    }
    if (!path.empty()) {
      svg += fmt::format("<path class=\"series\" d=\"{}\" stroke=\"{}\"/>", path, color);
    }
  }
  svg += legend(entries, kHeight + 8);
  return svg + "</svg>";
}

std::string stacked_area_svg(const PlotAxes& axes, const std::vector<double>& x, double cell_width,
                             const std::vector<StackedLayer>& layers) {
  double y_high = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double total = 0;
    for (const StackedLayer& layer : layers) total += i < layer.values.size() ? layer.values[i] : 0;
    y_high = std::max(y_high, total);
  }
  const double x_high = x.empty() ? 1 : x.back() + cell_width;
  std::vector<std::pair<std::string, std::string>> entries;
  for (const StackedLayer& layer : layers) entries.emplace_back(layer.label, layer.color);
  const double legend_rows = legend_height(entries);
  const Frame frame(padded_range(axes.x_min.value_or(0), axes.x_max.value_or(x_high), true),
                    padded_range(axes.y_min.value_or(0), axes.y_max.value_or(y_high), true), false);
  std::string svg = open_svg(axes, legend_rows, layers.size());
  svg += draw_axes(frame, axes);
  std::vector<double> base(x.size(), 0.0);
  for (const StackedLayer& layer : layers) {
    std::string top;
    std::string bottom;
    for (size_t i = 0; i < x.size(); ++i) {
      const double value = i < layer.values.size() ? layer.values[i] : 0;
      const double x0 = frame.px(x[i]);
      const double x1 = frame.px(x[i] + cell_width);
      top += fmt::format("{}{:.1f},{:.1f}L{:.1f},{:.1f}", i == 0 ? "M" : "L", x0,
                         frame.py(base[i] + value), x1, frame.py(base[i] + value));
      bottom = fmt::format("L{:.1f},{:.1f}L{:.1f},{:.1f}", x1, frame.py(base[i]), x0,
                           frame.py(base[i])) +
               bottom;
      base[i] += value;
    }
    if (!top.empty()) {
      svg +=
          fmt::format("<path class=\"layer\" d=\"{}{}Z\" fill=\"{}\"/>", top, bottom, layer.color);
    }
  }
  svg += legend(entries, kHeight + 8);
  return svg + "</svg>";
}

std::string strip_svg(const PlotAxes& axes, const std::vector<double>& x, double cell_width,
                      const std::vector<StripRow>& rows) {
  const double x_high = x.empty() ? 1 : x.back() + cell_width;
  // A strip needs a row's height per row, not a chart's.
  const double strip_height =
      kTop + kBottom + 36.0 * static_cast<double>(std::max<size_t>(rows.size(), 1));
  const Frame frame(padded_range(axes.x_min.value_or(0), axes.x_max.value_or(x_high), true),
                    Range{0, static_cast<double>(std::max<size_t>(rows.size(), 1))}, false,
                    strip_height);
  std::string svg = open_svg(axes, 0, rows.size(), strip_height);
  svg += fmt::format("<rect class=\"area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", kLeft,
                     kTop, kWidth - kRight - kLeft, frame.bottom() - kTop);
  for (size_t r = 0; r < rows.size(); ++r) {
    const StripRow& row = rows[r];
    const double top = frame.py(static_cast<double>(rows.size() - r));
    const double height = frame.py(static_cast<double>(rows.size() - r - 1)) - top;
    svg += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>",
                       kLeft - 4, top + height / 2 + 3, escape_html(row.label));
    for (size_t i = 0; i < x.size() && i < row.shares.size(); ++i) {
      const double share = std::clamp(row.shares[i], 0.0, 1.0);
      if (share <= 0) continue;
      svg += fmt::format(
          "<rect class=\"cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" "
          "fill=\"{}\" "
          "fill-opacity=\"{:.2f}\"/>",
          frame.px(x[i]), top + 2, std::max(0.5, frame.px(x[i] + cell_width) - frame.px(x[i])),
          height - 4, row.color, share);
    }
  }
  for (const double t : linear_ticks(frame.x(), 6)) {
    svg += fmt::format(
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}"
        "</text>",
        frame.px(t), frame.bottom() + 13, number(t));
  }
  svg += fmt::format(
      "<text class=\"label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>",
      (kLeft + kWidth - kRight) / 2, frame.bottom() + 28, escape_html(axes.x_label));
  return svg + "</svg>";
}

std::string bar_chart_svg(const PlotAxes& axes, const std::vector<Bar>& bars) {
  double y_high = 0;
  for (const Bar& bar : bars) y_high = std::max({y_high, bar.value, bar.high.value_or(0)});
  const Frame frame(Range{0, static_cast<double>(std::max<size_t>(bars.size(), 1))},
                    padded_range(0, axes.y_max.value_or(y_high * 1.15), true), false);
  std::string svg = open_svg(axes, 0, bars.size());
  svg += fmt::format("<rect class=\"area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", kLeft,
                     kTop, kWidth - kRight - kLeft, frame.bottom() - kTop);
  for (const double t : linear_ticks(frame.y(), 5)) {
    const double y = frame.py(t);
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
        "<text class=\"tick\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>",
        kLeft, y, kWidth - kRight, kLeft - 4, y + 3, number(t));
  }
  svg += fmt::format(
      "<text class=\"label\" transform=\"translate(13,{:.1f}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text>",
      (kTop + frame.bottom()) / 2, escape_html(axes.y_label));
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& bar = bars[i];
    const double left = frame.px(static_cast<double>(i) + 0.15);
    const double right = frame.px(static_cast<double>(i) + 0.85);
    const double top = frame.py(bar.value);
    svg += fmt::format(
        "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"{}\"/>",
        left, top, right - left, frame.bottom() - top, series_color(i));
    if (bar.low && bar.high) {
      const double middle = (left + right) / 2;
      svg += fmt::format(
          "<path class=\"whisker\" d=\"M{0:.1f},{1:.1f}V{2:.1f}M{3:.1f},{1:.1f}H{4:.1f}"
          "M{3:.1f},{2:.1f}H{4:.1f}\"/>",
          middle, frame.py(*bar.low), frame.py(*bar.high), middle - 5, middle + 5);
    }
    svg += fmt::format(
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}{}</text>",
        (left + right) / 2, top - 4, number(bar.value),
        bar.note.empty() ? "" : " " + escape_html(bar.note));
    svg += fmt::format(
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>",
        (left + right) / 2, frame.bottom() + 13, escape_html(bar.label));
  }
  return svg + "</svg>";
}

}  // namespace gangway

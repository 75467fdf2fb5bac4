// Plots as inline SVG text, for the self-contained HTML reports (`--report FILE.html`): line and
// step charts (CDFs, attainment against load, time series), stacked areas (GPU-time by
// activity), a strip of shaded cells (gang phases) and bars with confidence intervals (policies
// side by side). SVG written by gangway itself, rather than a plotting library loaded from the
// network, keeps a report one file that opens offline and reads the same in every browser.
//
// Every chart is an <svg class="plot"> with a title, axes with ticks, and a legend.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gangway {

struct PlotAxes {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  std::optional<double> x_min, x_max, y_min, y_max;
  // A horizontal reference line (a target), drawn dashed and labelled.
  std::optional<double> y_reference;
  std::string y_reference_label;
};

struct PlotSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;
  bool step = false;     // a step function (CDFs): horizontal, then vertical
  bool markers = false;  // a dot at every point, no line (probes of a search)
};

struct StackedLayer {
  std::string label;
  std::string color;           // CSS color
  std::vector<double> values;  // one per x
};

struct StripRow {
  std::string label;
  std::string color;
  std::vector<double> shares;  // per x: the share of the cell to shade, in [0, 1]
};

struct Bar {
  std::string label;
  double value = 0;
  std::optional<double> low, high;  // an interval drawn as a whisker
  std::string note;                 // shown after the value ("above range")
};

// The palette series are drawn in, in order.
const std::string& series_color(size_t index);

std::string line_chart_svg(const PlotAxes& axes, const std::vector<PlotSeries>& series);
// Layers stacked in order from the bottom; x are the left edges of equal-width cells.
std::string stacked_area_svg(const PlotAxes& axes, const std::vector<double>& x, double cell_width,
                             const std::vector<StackedLayer>& layers);
std::string strip_svg(const PlotAxes& axes, const std::vector<double>& x, double cell_width,
                      const std::vector<StripRow>& rows);
std::string bar_chart_svg(const PlotAxes& axes, const std::vector<Bar>& bars);

// Text escaped for HTML and SVG (&, <, >, ").
std::string escape_html(const std::string& text);

}  // namespace gangway

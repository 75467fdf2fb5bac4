#include "cli/html_report.h"

#include <fstream>

#include "cli/svg_plot.h"
#include "core/input_error.h"

namespace gangway {
namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1600px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f2f2f2; }
.row { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 0; } figcaption { font-size: 12px; color: #555; max-width: 480px; }
svg.plot { background: #fff; }
svg.plot .title { font-size: 13px; font-weight: 600; }
svg.plot .tick, svg.plot .legend { font-size: 10px; fill: #444; }
svg.plot .label { font-size: 11px; fill: #222; }
svg.plot .area { fill: #fafafa; stroke: #bbb; }
svg.plot .grid { stroke: #e4e4e4; }
svg.plot .series { fill: none; stroke-width: 1.6; }
svg.plot .reference { stroke: #000; stroke-dasharray: 4 3; }
svg.plot .whisker { stroke: #000; fill: none; }
)";

// Counts the plots that have a size and drawn marks, and any error while loading, into <body>'s
// data attributes (read by the browser test).
constexpr const char* kScript = R"(
(function () {
  var errors = 0;
  window.addEventListener('error', function () {
    errors += 1;
    document.body.setAttribute('data-errors', String(errors));
  });
  function count() {
    var plots = document.querySelectorAll('svg.plot');
    var drawn = 0;
    for (var i = 0; i < plots.length; i++) {
      var box = plots[i].getBoundingClientRect();
      if (box.width > 0 && box.height > 0 && plots[i].querySelector('path, rect.bar, rect.cell, circle')) {
        drawn += 1;
      }
    }
    document.body.setAttribute('data-plots', String(plots.length));
    document.body.setAttribute('data-drawn', String(drawn));
    document.body.setAttribute('data-errors', String(errors));
  }
  count();
  window.addEventListener('load', count);
})();
)";

}  // namespace

HtmlReport::HtmlReport(std::string title) : title_(std::move(title)) {}

void HtmlReport::heading(const std::string& text, int level) {
  const std::string tag = "h" + std::to_string(level);
  body_ += "<" + tag + ">" + escape_html(text) + "</" + tag + ">\n";
}

void HtmlReport::paragraph(const std::string& text) {
  body_ += "<p>" + escape_html(text) + "</p>\n";
}

void HtmlReport::table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows) {
  body_ += "<table><tr>";
  for (const std::string& cell : header) body_ += "<th>" + escape_html(cell) + "</th>";
  body_ += "</tr>\n";
  for (const auto& row : rows) {
    body_ += "<tr>";
    for (const std::string& cell : row) body_ += "<td>" + escape_html(cell) + "</td>";
    body_ += "</tr>\n";
  }
  body_ += "</table>\n";
}

void HtmlReport::plot_row(const std::vector<std::string>& svgs,
                          const std::vector<std::string>& captions) {
  body_ += "<div class=\"row\">";
  for (size_t i = 0; i < svgs.size(); ++i) {
    body_ += "<figure>" + svgs[i];
    if (i < captions.size() && !captions[i].empty()) {
      body_ += "<figcaption>" + escape_html(captions[i]) + "</figcaption>";
    }
    body_ += "</figure>";
  }
  body_ += "</div>\n";
}

std::string HtmlReport::html() const {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         escape_html(title_) + "</title>\n<style>" + kStyle + "</style></head>\n<body>\n<h1>" +
         escape_html(title_) + "</h1>\n" + body_ + "<script>" + kScript +
         "</script>\n</body></html>\n";
}

void HtmlReport::write(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError::at(path, std::nullopt, "--report", "cannot open for writing");
  out << html();
  out.close();
  if (!out) throw InputError::at(path, std::nullopt, "--report", "cannot write the report");
}

}  // namespace gangway

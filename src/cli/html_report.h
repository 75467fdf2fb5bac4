// One self-contained HTML page for `--report FILE.html`: headings, text, tables and rows of SVG
// plots (svg_plot.h), with its style and a few lines of script inline. It loads nothing from the
// network (its Content-Security-Policy forbids it), so it opens anywhere, offline, and can be
// mailed or attached to a ticket as one file.
//
// The script records load errors and counts the plots that were drawn into attributes of
// <body> (data-plots, data-drawn, data-errors): what the browser test checks.
#pragma once

#include <string>
#include <vector>

namespace gangway {

class HtmlReport {
 public:
  explicit HtmlReport(std::string title);

  void heading(const std::string& text, int level = 2);
  // Plain text, escaped.
  void paragraph(const std::string& text);
  void table(const std::vector<std::string>& header,
             const std::vector<std::vector<std::string>>& rows);
  // Plots side by side, wrapping onto more lines when the window is narrow; each with a caption.
  void plot_row(const std::vector<std::string>& svgs,
                const std::vector<std::string>& captions = {});

  std::string html() const;
  // Writes the page; throws InputError naming --report when the file cannot be written.
  void write(const std::string& path) const;

 private:
  std::string title_;
  std::string body_;
};

}  // namespace gangway

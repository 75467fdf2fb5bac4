// Plain-text tables for a terminal: every report of the `gangway` command prints through this, so
// that they all fit 100 columns, line up whatever the names' lengths, and write "-" where there
// is no data.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace gangway {

// The width every table fits.
inline constexpr int kTableWidth = 100;

// Columns are sized to their contents; the first (a name) is left-aligned, the rest right-aligned.
// When a row would pass the width, the first column is narrowed to fit, and a name wider than it
// is printed whole on a line of its own above its row's figures.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, int indent = 0);
  void add_row(std::vector<std::string> cells);
  void print(std::ostream& out, int max_width = kTableWidth) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  int indent_;
};

// "label: a, b, c" wrapped at the width, continuation lines indented under the first item.
void print_wrapped(std::ostream& out, const std::string& label,
                   const std::vector<std::string>& items, int indent = 0,
                   int max_width = kTableWidth);

// "label: text", the text wrapped at word boundaries to the width, continuation lines indented
// under its first word.
void print_paragraph(std::ostream& out, const std::string& label, const std::string& text,
                     int max_width = kTableWidth);

// Cells: a figure, or "-" when there is none.
std::string dash_or(const std::optional<double>& value, int decimals);
std::string percent_or_dash(const std::optional<double>& fraction, int decimals = 1);
// "12.3 ±0.4": a mean and the half-width of its confidence interval ("12.3" alone without one).
std::string with_spread(const std::optional<double>& mean, const std::optional<double>& half_width,
                        int decimals, bool percent = false);
// A name cut to `width` characters, ending in '~' when cut.
std::string shortened(const std::string& name, size_t width);

}  // namespace gangway

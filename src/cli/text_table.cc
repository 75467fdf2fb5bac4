#include "cli/text_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace gangway {
namespace {

// Characters a terminal shows for UTF-8 text ("±" is two bytes, one column).
size_t display_width(const std::string& text) {
  size_t width = 0;
  for (const char c : text) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return width;
}

std::string padded_cell(const std::string& text, size_t width, bool left) {
  const size_t shown = display_width(text);
  const std::string fill(width > shown ? width - shown : 0, ' ');
  return left ? text + fill : fill + text;
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header, int indent)
    : header_(std::move(header)), indent_(indent) {}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::print(std::ostream& out, int max_width) const {
  std::vector<size_t> widths(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      widths[c] = std::max(widths[c], display_width(cells[c]));
    }
  };
  widen(header_);
  for (const auto& row : rows_) widen(row);
  size_t rest = static_cast<size_t>(indent_);
  for (size_t c = 1; c < widths.size(); ++c) rest += widths[c] + 1;
  const size_t limit = static_cast<size_t>(std::max(max_width, 1));
  if (!widths.empty() && rest + widths[0] > limit) {
    widths[0] = std::max<size_t>(limit > rest ? limit - rest : 0, 8);
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text(static_cast<size_t>(indent_), ' ');
    // A name wider than its column goes on a line of its own, the figures on the next.
    const bool name_above = !cells.empty() && display_width(cells[0]) > widths[0];
    if (name_above) {
      out << text << shortened(cells[0], limit > static_cast<size_t>(indent_) ? limit - indent_ : 1)
          << "\n";
    }
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c == 0) {
        text += padded_cell(name_above ? std::string() : cells[c], widths[c], true);
      } else {
        text += " " + padded_cell(cells[c], widths[c], false);
      }
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(header_);
  for (const auto& row : rows_) line(row);
}

void print_wrapped(std::ostream& out, const std::string& label,
                   const std::vector<std::string>& items, int indent, int max_width) {
  if (items.empty()) return;
  const std::string lead = std::string(static_cast<size_t>(indent), ' ') + label + ": ";
  std::string line = lead;
  bool first = true;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (!first && line.size() + 1 + item.size() > static_cast<size_t>(max_width)) {
      out << line << "\n";
      line = std::string(lead.size(), ' ');
      first = true;
    }
    line += (first ? "" : " ") + item;
    first = false;
  }
  out << line << "\n";
}

void print_paragraph(std::ostream& out, const std::string& label, const std::string& text,
                     int max_width) {
  const std::string lead = label + ": ";
  std::string line = lead;
  bool empty = true;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (!empty && display_width(line) + 1 + display_width(word) > static_cast<size_t>(max_width)) {
      out << line << "\n";
      line = std::string(lead.size(), ' ');
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  out << line << "\n";
}

std::string dash_or(const std::optional<double>& value, int decimals) {
  if (!value) return "-";
  return fmt::format("{:.{}f}", *value, decimals);
}

std::string percent_or_dash(const std::optional<double>& fraction, int decimals) {
  if (!fraction) return "-";
  return fmt::format("{:.{}f}%", 100.0 * *fraction, decimals);
}

std::string with_spread(const std::optional<double>& mean, const std::optional<double>& half_width,
                        int decimals, bool percent) {
  if (!mean) return "-";
  const double scale = percent ? 100.0 : 1.0;
  std::string text = fmt::format("{:.{}f}{}", scale * *mean, decimals, percent ? "%" : "");
  if (half_width) text += fmt::format(" ±{:.{}f}", scale * *half_width, decimals);
  return text;
}

std::string shortened(const std::string& name, size_t width) {
  if (name.size() <= width) return name;
  if (width == 0) return "";
  return name.substr(0, width - 1) + "~";
}

}  // namespace gangway

#include "rnnsearch/output/heatmap.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string_view>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/text/tokenizer.h"

namespace rnnsearch {

namespace {

// ---- Layout constants (px unless noted) ------------------------------------------------

// Labels are drawn at 12px; a token longer than this many characters is shortened with
// "…" (the full token stays in a tooltip) so one URL cannot push the grid off the page.
constexpr int kFontSize = 12;
constexpr size_t kMaxLabelChars = 20;
// Estimated advance of one character, in em: CJK ideographs, kana, Hangul and full-width
// forms take a full em, most other scripts about 0.6 em in DejaVu Sans; the "…" that ends
// a shortened label is counted as a full em. Only used to reserve label space, so erring
// wide is fine.
constexpr double kWideCharEm = 1.0;
constexpr double kNarrowCharEm = 0.62;
constexpr double kEllipsisEm = 1.0;

// 20px cells keep a 50-token sentence about 1000px wide; source labels are slanted 60°
// so neighbouring labels are 17px apart (perpendicular) and long words still fit.
constexpr int kCell = 20;                              // side of one (square) cell
constexpr int kMargin = 12;                            // blank border around the picture
constexpr int kMinWidth = 360;                         // least width (plus kMargin): the title fits
constexpr int kTitleHeight = 34;                       // band at the top reserved for the title
constexpr int kTitleBaseline = 22;                     // y of the title's baseline
constexpr int kTitleFontSize = 15;                     // the title's font size (bold)
constexpr int kNoWeightsBaseline = kTitleHeight + 16;  // y of "(no attention weights)"
constexpr double kLabelAngle = 60.0, kPi = 3.14159265358979323846;  // source label slant, degrees
constexpr int kLabelGap = 6;                           // between a label and the grid
// Room for the height of the slanted source labels' glyphs: above the tallest label, and
// right of where the last label's baseline is estimated to end.
constexpr int kSlantedLabelTop = kFontSize / 2;
constexpr int kSlantedLabelRight = kFontSize;
// A slanted label starts this far right of its column's centre, so that its rotated glyphs
// (not just its baseline) sit over the column.
constexpr int kSourceLabelShift = kFontSize / 3;
// Baseline offset that centres a label vertically on its row (dominant-baseline would do
// it too, but not in every SVG renderer).
constexpr int kTextMiddle = kFontSize * 35 / 100;  // 0.35 em
// Colour bar right of the grid: its gap to the grid, width, room for its tick labels and
// least height (it is as tall as the grid when that is taller).
constexpr int kLegendGap = 24, kLegendWidth = 14, kLegendLabelWidth = 40, kMinLegendHeight = 120;
constexpr int kLegendTicks = 4;          // intervals between ticks: 0, 0.25, 0.5, 0.75, 1
constexpr int kLegendTickLength = 4;     // tick marks, right of the bar
constexpr int kLegendTickLabelGap = 7;   // from the bar's right edge to a tick label

// ---- Colour -------------------------------------------------------------------------

// matplotlib's viridis (CC0) at t = k/15, k = 0..15: every 17th entry of its 256-entry
// table, so both ends are exact and linear interpolation in between is within ~1/255 of
// the full table.
constexpr unsigned kViridis[] = {0x440154, 0x481a6c, 0x472f7d, 0x414487, 0x39568c, 0x31688e,
                                 0x2a788e, 0x23888e, 0x1f988b, 0x22a884, 0x35b779, 0x54c568,
                                 0x7ad151, 0xa5db36, 0xd2e21b, 0xfde725};
constexpr int kViridisStops = sizeof kViridis / sizeof kViridis[0];

// ---- Text ---------------------------------------------------------------------------

// Fonts tried in order: DejaVu/Noto cover Latin, Greek, Cyrillic and more; the CJK
// entries cover Chinese, Japanese and Korean on Linux, macOS and Windows.
constexpr const char* kFontFamily =
    "'DejaVu Sans', 'Noto Sans', 'Noto Sans CJK SC', 'Source Han Sans SC', 'PingFang SC', "
    "'Microsoft YaHei', 'Segoe UI', 'Arial Unicode MS', Arial, sans-serif";

// Escapes the five XML special characters, which also makes the text safe inside HTML
// attributes and elements. C0 control characters are not allowed in XML 1.0 at all (one
// would make the browser reject the whole SVG), so they become U+FFFD.
std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
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
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
          out += "\xEF\xBF\xBD";
        else
          out += ch;
    }
  }
  return out;
}

// Wide or full-width in Unicode's East Asian Width property (UAX #11): CJK ideographs,
// kana, Hangul, full-width forms, most emoji.
bool is_wide(UChar32 c) {
  const int width = u_getIntPropertyValue(c, UCHAR_EAST_ASIAN_WIDTH);
  return width == U_EA_WIDE || width == U_EA_FULLWIDTH;
}

// Token k of a sentence, where k == tokens.size() is the </s> the alignment adds.
const std::string& token_at(const std::vector<std::string>& tokens, size_t k) {
  static const std::string eos = "</s>";
  return k < tokens.size() ? tokens[k] : eos;
}

struct Label {
  std::string shown;  // possibly shortened, not yet escaped
  bool shortened = false;
  double width = 0;  // estimated rendered width in px
};

Label make_label(const std::string& token) {
  Label label;
  size_t chars = 0;
  // Tokens are valid UTF-8; were one not, each ill-formed piece would count as one U+FFFD.
  const size_t size = token.size();
  for (size_t pos = 0, next = 0; pos < size; pos = next) {
    UChar32 c;
    U8_NEXT_OR_FFFD(token.data(), next, size, c);
    if (chars == kMaxLabelChars - 1 && next < size) {
      label.shown = token.substr(0, pos) + "\u2026";
      label.shortened = true;
      label.width += kFontSize * kEllipsisEm;
      return label;
    }
    label.width += kFontSize * (is_wide(c) ? kWideCharEm : kNarrowCharEm);
    ++chars;
  }
  label.shown = token;
  return label;
}

// Tokens plus the "</s>" that the alignment has a row/column for.
std::vector<Label> make_labels(const std::vector<std::string>& tokens) {
  std::vector<Label> labels;
  for (size_t k = 0; k <= tokens.size(); ++k) labels.push_back(make_label(token_at(tokens, k)));
  return labels;
}

double widest(const std::vector<Label>& labels) {
  double width = 0;
  for (const auto& label : labels) width = std::max(width, label.width);
  return width;
}

// <text> element; a shortened label carries the full token as its tooltip.
std::string text_element(const Label& label, const std::string& full,
                         const std::string& attributes) {
  std::string element = "<text " + attributes + ">";
  if (label.shortened) element += "<title>" + escape_xml(full) + "</title>";
  return element + escape_xml(label.shown) + "</text>\n";
}

std::string format_number(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// ---- Layout -------------------------------------------------------------------------

struct Layout {
  int grid_x, grid_y, grid_w, grid_h;
  int legend_x, legend_h;
  int width, height;
};

Layout compute_layout(const std::vector<Label>& source, const std::vector<Label>& target, int rows,
                      int cols) {
  const double radians = kLabelAngle * kPi / 180.0;
  const double source_width = widest(source);
  Layout layout;
  layout.grid_w = cols * kCell;
  layout.grid_h = rows * kCell;
  layout.grid_x = kMargin + static_cast<int>(std::ceil(widest(target))) + kLabelGap;
  layout.grid_y = kTitleHeight + static_cast<int>(std::ceil(source_width * std::sin(radians))) +
                  kLabelGap + kSlantedLabelTop;
  layout.legend_x = layout.grid_x + layout.grid_w + kLegendGap;
  layout.legend_h = std::max(layout.grid_h, kMinLegendHeight);
  // The slanted labels of the last columns reach right of the grid, possibly past the
  // legend; the picture must be wide enough for whichever ends further right.
  const int labels_right = layout.grid_x + layout.grid_w - kCell / 2 +
                           static_cast<int>(std::ceil(source_width * std::cos(radians))) +
                           kSlantedLabelRight;
  const int legend_right = layout.legend_x + kLegendWidth + kLegendLabelWidth;
  layout.width = std::max({labels_right, legend_right, kMinWidth}) + kMargin;
  layout.height = layout.grid_y + std::max(layout.grid_h, layout.legend_h) + kMargin;
  return layout;
}

// ---- SVG parts ----------------------------------------------------------------------

std::string svg_title(const TranslationRecord& record) {
  return "<text x=\"" + std::to_string(kMargin) + "\" y=\"" + std::to_string(kTitleBaseline) +
         "\" font-size=\"" + std::to_string(kTitleFontSize) + "\" font-weight=\"bold\">" + "Line " +
         std::to_string(record.line + 1) + " \u00b7 score " + format_number("%.4f", record.score) +
         "</text>\n";
}

std::string svg_source_labels(const TranslationRecord& record, const std::vector<Label>& labels,
                              const Layout& layout) {
  std::string out = "<g text-anchor=\"start\">\n";
  const int y = layout.grid_y - kLabelGap;
  for (size_t j = 0; j < labels.size(); ++j) {
    const int x = layout.grid_x + static_cast<int>(j) * kCell + kCell / 2 + kSourceLabelShift;
    const std::string sx = std::to_string(x), sy = std::to_string(y);
    out += text_element(labels[j], token_at(record.source, j),
                        "x=\"" + sx + "\" y=\"" + sy + "\" transform=\"rotate(-" +
                            format_number("%g", kLabelAngle) + " " + sx + " " + sy + ")\"");
  }
  return out + "</g>\n";
}

std::string svg_target_labels(const TranslationRecord& record, const std::vector<Label>& labels,
                              const Layout& layout) {
  std::string out = "<g text-anchor=\"end\">\n";
  const int x = layout.grid_x - kLabelGap;
  for (size_t i = 0; i < labels.size(); ++i) {
    const int y = layout.grid_y + static_cast<int>(i) * kCell + kCell / 2 + kTextMiddle;
    out += text_element(labels[i], token_at(record.target, i),
                        "x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\"");
  }
  return out + "</g>\n";
}

// One rect per weight, with a tooltip naming the token pair (visible when the SVG is
// opened on its own; an <img> is not interactive). crispEdges avoids hairline seams. The
// hard alignment (translate --alignment hard: each target token's most attended source
// token) is outlined on it, a red square inside each linked cell, red standing out on every
// viridis colour.
std::string svg_cells(const TranslationRecord& record, const Layout& layout) {
  const Alignment& alignment = record.alignment;
  const std::string size =
      "\" width=\"" + std::to_string(kCell) + "\" height=\"" + std::to_string(kCell);
  std::string out = "<g shape-rendering=\"crispEdges\">\n";
  for (int i = 0; i < alignment.rows; ++i) {
    const std::string& target = token_at(record.target, i);
    for (int j = 0; j < alignment.cols; ++j) {
      const std::string& source = token_at(record.source, j);
      const double weight = alignment.at(i, j);
      out += "<rect class=\"cell\" x=\"" + std::to_string(layout.grid_x + j * kCell) + "\" y=\"" +
             std::to_string(layout.grid_y + i * kCell) + size + "\" fill=\"" + viridis_hex(weight) +
             "\"><title>" + escape_xml(source + " \u2192 " + target) + ": " +
             format_number("%.4f", weight) + "</title></rect>\n";
    }
  }
  const std::string inner = "\" width=\"" + std::to_string(kCell - 4) + "\" height=\"" + std::to_string(kCell - 4);
  for (const auto& [source, target] : hard_alignment(alignment))
    out += "<rect class=\"link\" x=\"" + std::to_string(layout.grid_x + source * kCell + 2) + "\" y=\"" +
           std::to_string(layout.grid_y + target * kCell + 2) + inner +
           "\" fill=\"none\" stroke=\"#e8112d\" stroke-width=\"1.5\"/>\n";
  out += "<rect x=\"" + std::to_string(layout.grid_x) + "\" y=\"" + std::to_string(layout.grid_y) +
         "\" width=\"" + std::to_string(layout.grid_w) + "\" height=\"" +
         std::to_string(layout.grid_h) + "\" fill=\"none\" stroke=\"#999\" stroke-width=\"1\"/>\n";
  return out + "</g>\n";
}

// Vertical colour bar, 1 at the top and 0 at the bottom, drawn as a gradient through the
// same key colours viridis_hex interpolates, with ticks every 0.25.
std::string svg_legend(const Layout& layout) {
  std::string out = "<defs><linearGradient id=\"viridis\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  for (int k = 0; k < kViridisStops; ++k) {
    const double t = double(k) / (kViridisStops - 1);
    out += "<stop offset=\"" + format_number("%.4f", t) + "\" stop-color=\"" + viridis_hex(t) +
           "\"/>\n";
  }
  out += "</linearGradient></defs>\n";
  const int x = layout.legend_x, top = layout.grid_y, h = layout.legend_h;
  out += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(top) + "\" width=\"" +
         std::to_string(kLegendWidth) + "\" height=\"" + std::to_string(h) +
         "\" fill=\"url(#viridis)\" stroke=\"#999\" stroke-width=\"1\"/>\n";
  for (int k = 0; k <= kLegendTicks; ++k) {
    const double value = static_cast<double>(k) / kLegendTicks;
    const int y = top + static_cast<int>(std::lround(h * (1.0 - value)));
    out += "<line x1=\"" + std::to_string(x + kLegendWidth) + "\" y1=\"" + std::to_string(y) +
           "\" x2=\"" + std::to_string(x + kLegendWidth + kLegendTickLength) + "\" y2=\"" +
           std::to_string(y) + "\" stroke=\"#444\"/>\n";
    out += "<text x=\"" + std::to_string(x + kLegendWidth + kLegendTickLabelGap) + "\" y=\"" +
           std::to_string(y + kTextMiddle) + "\">" + format_number("%g", value) + "</text>\n";
  }
  return out;
}

// ---- index.html ---------------------------------------------------------------------

// Tokens joined by spaces and escaped; an empty translation is shown as such rather
// than as a blank that looks like a rendering fault.
std::string sentence_html(const std::vector<std::string>& tokens) {
  if (tokens.empty()) return "<em>(empty)</em>";
  return escape_xml(join_tokens(tokens));
}

constexpr const char* kIndexHead = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Attention heatmaps</title>
<style>
body { font-family: system-ui, 'DejaVu Sans', 'Noto Sans', 'Noto Sans CJK SC', sans-serif;
       margin: 0 auto; max-width: 1280px; padding: 1em; color: #222; background: #f6f6f6; }
section { background: #fff; border: 1px solid #ddd; border-radius: 6px;
          padding: 1em; margin: 1em 0; }
h2 { font-size: 1.05em; margin: 0 0 .6em; }
h2 .score { color: #666; font-weight: normal; margin-left: .8em; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .3em 1em; margin: 0 0 .8em; }
dt { font-weight: bold; color: #555; }
dd { margin: 0; }
img { display: block; max-width: 100%; height: auto; }
</style>
</head>
<body>
<h1>Attention heatmaps</h1>
)";

std::string index_entry(const TranslationRecord& record, const std::string& svg_name) {
  const std::string name = escape_xml(svg_name), line = std::to_string(record.line + 1);
  return "<section id=\"line-" + line + "\">\n<h2>Line " + line + "<span class=\"score\">score " +
         format_number("%.4f", record.score) + "</span></h2>\n<dl>\n<dt>Source</dt><dd>" +
         sentence_html(record.source) + "</dd>\n<dt>Translation</dt><dd>" +
         sentence_html(record.target) + "</dd>\n</dl>\n<a href=\"" + name + "\"><img src=\"" +
         name + "\" alt=\"attention heatmap of line " + line +
         "\" loading=\"lazy\"></a>\n</section>\n";
}

// "00042.svg" for line 41; further records of the same line (n-best lists) get
// "00042-2.svg", "00042-3.svg", ... instead of overwriting the first.
std::string svg_file_name(size_t line, int occurrence) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%05zu", line + 1);
  return buffer + (occurrence > 1 ? "-" + std::to_string(occurrence) : std::string()) + ".svg";
}

}  // namespace

std::string viridis_hex(double weight) {
  // NaN (a broken model) is drawn like 0 rather than reaching the table with a bad index.
  const double t = std::isnan(weight) ? 0.0 : std::clamp(weight, 0.0, 1.0);
  const double position = t * (kViridisStops - 1);
  const int k = std::min(static_cast<int>(position), kViridisStops - 2);
  const double f = position - k;
  char buffer[8];
  int channels[3];
  for (int c = 0; c < 3; ++c) {
    const int shift = 16 - 8 * c;
    const double low = (kViridis[k] >> shift) & 0xFF, high = (kViridis[k + 1] >> shift) & 0xFF;
    channels[c] = static_cast<int>(std::lround(low + f * (high - low)));
  }
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", channels[0], channels[1], channels[2]);
  return buffer;
}

std::string heatmap_svg(const TranslationRecord& record) {
  check_alignment_shape(record);
  const Alignment& alignment = record.alignment;
  const std::vector<Label> source = make_labels(record.source), target = make_labels(record.target);
  const Layout layout = compute_layout(source, target, alignment.rows, alignment.cols);
  const std::string width = std::to_string(layout.width), height = std::to_string(layout.height);

  std::string svg =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
      width + "\" height=\"" + height + "\" viewBox=\"0 0 " + width + " " + height +
      "\" font-family=\"" + kFontFamily + "\" font-size=\"" + std::to_string(kFontSize) +
      "\" fill=\"#222\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";  // readable on dark viewers
  svg += svg_title(record);
  if (alignment.rows == 0) {
    svg += "<text x=\"" + std::to_string(kMargin) + "\" y=\"" + std::to_string(kNoWeightsBaseline) +
           "\">(no attention weights)</text>\n";
  } else {
    svg += svg_source_labels(record, source, layout);
    svg += svg_target_labels(record, target, layout);
    svg += svg_cells(record, layout);
    svg += svg_legend(layout);
  }
  return svg + "</svg>\n";
}

std::string write_heatmaps(const std::string& dir, const std::vector<TranslationRecord>& records) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw Error(located(dir, 0, "cannot create directory: " + error.message()));

  std::string index = kIndexHead;
  index += "<p>" + std::to_string(records.size()) +
           " sentence(s). Rows are target tokens, columns source tokens; click a picture to open "
           "the SVG, whose cells show their exact weight on hover.</p>\n";
  std::map<size_t, int> occurrences;
  for (const auto& record : records) {
    const std::string name = svg_file_name(record.line, ++occurrences[record.line]);
    write_file_atomically((fs::path(dir) / name).string(), heatmap_svg(record));
    index += index_entry(record, name);
  }
  index += "</body>\n</html>\n";
  const std::string index_path = (fs::path(dir) / "index.html").string();
  write_file_atomically(index_path, index);
  return index_path;
}

}  // namespace rnnsearch

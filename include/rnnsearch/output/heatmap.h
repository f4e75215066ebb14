#pragma once
// Attention heatmaps: one self-contained SVG per sentence (source tokens along the top,
// target tokens down the side, one cell per weight on the viridis scale, with a legend)
// and an index.html that lists them all.
#include <string>
#include <vector>

#include "rnnsearch/output/alignment.h"

namespace rnnsearch {

// SVG text for one record; tokens are XML-escaped, </s> is shown as a column/row label.
std::string heatmap_svg(const TranslationRecord& record);

// Viridis colour for a weight in [0, 1] as "#rrggbb" (clamped outside).
std::string viridis_hex(double weight);

// Writes DIR/NNNNN.svg for each record (NNNNN = line + 1, zero-padded to 5 digits) and
// DIR/index.html (sentence, translation, score, inline image link); creates DIR.
// Returns the path of index.html. Files are written atomically.
std::string write_heatmaps(const std::string& dir, const std::vector<TranslationRecord>& records);

}  // namespace rnnsearch

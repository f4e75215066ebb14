#pragma once
// The page `rnnsearch serve` answers GET / with: one self-contained HTML file (no external
// request) that translates as one types, through the server's own POST /translate, and
// shows the n-best list and the attention heatmap of the chosen hypothesis, drawn by the
// server as --heatmaps draws it (output/heatmap.h), with a tooltip per cell.
#include <string>

namespace rnnsearch::serve {

const std::string& page_html();

}  // namespace rnnsearch::serve

#pragma once
// Output formats for one translated (or scored) sentence and its attention matrix.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "rnnsearch/decode/alternatives.h"
#include "rnnsearch/decode/hypothesis.h"

namespace rnnsearch {

struct TranslationRecord {
  size_t line = 0;                      // 0-based input line number
  std::vector<std::string> source;      // source tokens, without </s>
  std::vector<std::string> target;      // target tokens, without </s>
  double score = 0;                     // log-probability (normalized as the decoder ranks)
  Alignment alignment;                  // (target+1) x (source+1), may be empty
  AlternativeWord alternative;          // --alternatives (position −1 otherwise)
};

// Throws rnnsearch::Error unless the alignment holds rows*cols weights and is either empty
// or (target+1) x (source+1): the shape record_json and heatmap_svg label row by row.
void check_alignment_shape(const TranslationRecord& record);

// Hard alignment: for each target token (</s> excluded) the pair (source position of maximum
// attention, target position), 0-based; ties go to the leftmost column.
std::vector<std::pair<int, int>> hard_alignment(const Alignment& alignment, bool include_eos = false);
// The hard alignment in Pharaoh format, "src-tgt" pairs separated by spaces.
std::string pharaoh_alignment(const Alignment& alignment, bool include_eos = false);

// --alignment-units: "words" (false) or "pieces" (true, the raw matrix of a subword model's
// pieces); throws rnnsearch::Error otherwise.
bool parse_alignment_units(const std::string& name);

// Soft alignment as Marian prints it: rows separated by " ", weights of a row by ",".
std::string soft_alignment_text(const Alignment& alignment);

// One JSON object: {"line":..,"source":[..],"target":[..],"score":..,"alignment":[[..],..]}
// (alignment omitted when empty); record_json is its text, a single line.
nlohmann::ordered_json record_object(const TranslationRecord& record);
std::string record_json(const TranslationRecord& record);

}  // namespace rnnsearch

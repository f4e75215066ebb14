#include "rnnsearch/output/alignment.h"

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "rnnsearch/error.h"
#include "rnnsearch/text/pharaoh.h"

namespace rnnsearch {

namespace {

// Attention weights are printed with 4 significant digits: enough to read a distribution
// and compare runs, and it keeps a JSON line of a 50-token sentence a few kilobytes.
constexpr int kWeightDigits = 4;

void check_weights(const Alignment& alignment) {
  const bool consistent =
      alignment.rows >= 0 && alignment.cols >= 0 &&
      (alignment.rows == 0) == (alignment.cols == 0) &&
      alignment.weights.size() == static_cast<size_t>(alignment.rows) * alignment.cols;
  if (!consistent)
    throw Error("alignment: " + std::to_string(alignment.rows) + "x" +
                std::to_string(alignment.cols) + " matrix with " +
                std::to_string(alignment.weights.size()) + " weights");
}

std::string weight_text(float weight) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*g", kWeightDigits, static_cast<double>(weight));
  return buffer;
}

// The double nearest to the rounded decimal: nlohmann prints the shortest text that reads
// back to it, i.e. exactly the rounded digits ("0.1235", not "0.12350000000000001").
double rounded_weight(float weight) { return std::strtod(weight_text(weight).c_str(), nullptr); }

}  // namespace

void check_alignment_shape(const TranslationRecord& record) {
  const Alignment& alignment = record.alignment;
  check_weights(alignment);
  if (alignment.rows == 0) return;
  const size_t rows = record.target.size() + 1, cols = record.source.size() + 1;
  if (static_cast<size_t>(alignment.rows) != rows || static_cast<size_t>(alignment.cols) != cols)
    throw Error("alignment of line " + std::to_string(record.line + 1) + " is " +
                std::to_string(alignment.rows) + "x" + std::to_string(alignment.cols) +
                " but the sentence pair needs " + std::to_string(rows) + "x" +
                std::to_string(cols) + " (tokens + </s>)");
}

// A target row whose maximum falls on the source </s> column (the attention "parks" there
// for tokens with no source counterpart) is still printed, as the index of that column
// (= number of source tokens). Dropping such rows would silently hide them; tools that
// only accept real source positions can filter pairs whose index equals the source length.
// Ties go to the leftmost column.
std::vector<std::pair<int, int>> hard_alignment(const Alignment& alignment, bool include_eos) {
  check_weights(alignment);
  const int rows = include_eos || alignment.rows == 0 ? alignment.rows : alignment.rows - 1;
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < rows; ++i) {
    int best = 0;
    for (int j = 1; j < alignment.cols; ++j)
      if (alignment.at(i, j) > alignment.at(i, best)) best = j;
    pairs.emplace_back(best, i);
  }
  return pairs;
}

std::string pharaoh_alignment(const Alignment& alignment, bool include_eos) {
  std::vector<WordLink> links;
  for (const auto& [source, target] : hard_alignment(alignment, include_eos)) links.push_back({source, target});
  return pharaoh_text(links);
}

bool parse_alignment_units(const std::string& name) {
  if (name != "words" && name != "pieces")
    throw Error("--alignment-units must be words or pieces, not '" + name + "'");
  return name == "pieces";
}

std::string soft_alignment_text(const Alignment& alignment) {
  check_weights(alignment);
  std::string text;
  for (int i = 0; i < alignment.rows; ++i) {
    if (i > 0) text += ' ';
    for (int j = 0; j < alignment.cols; ++j) {
      if (j > 0) text += ',';
      text += weight_text(alignment.at(i, j));
    }
  }
  return text;
}

nlohmann::ordered_json record_object(const TranslationRecord& record) {
  check_alignment_shape(record);
  nlohmann::ordered_json object;  // ordered: fields appear in the documented order
  object["line"] = record.line;
  object["source"] = record.source;
  object["target"] = record.target;
  object["score"] = record.score;
  if (record.alignment.rows > 0) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (int i = 0; i < record.alignment.rows; ++i) {
      nlohmann::ordered_json row = nlohmann::ordered_json::array();
      for (int j = 0; j < record.alignment.cols; ++j)
        row.push_back(rounded_weight(record.alignment.at(i, j)));
      rows.push_back(std::move(row));
    }
    object["alignment"] = std::move(rows);
  }
  if (record.alternative.position >= 0)
    object["alternative"] = {{"position", record.alternative.position}, {"word", record.alternative.word},
                             {"probability", record.alternative.probability}};
  return object;
}

std::string record_json(const TranslationRecord& record) {
  // No indentation gives one line; invalid UTF-8 in a token becomes U+FFFD instead of an
  // exception, so one odd input line cannot abort a whole translation run.
  return record_object(record).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace rnnsearch

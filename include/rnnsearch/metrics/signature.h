#pragma once
// What BLEU, chrF and TER share. Above all the reproducibility signature `rnnsearch bleu`
// prints with each score, in sacreBLEU 2.x's text format (docs/metrics.md):
// "NAME|nrefs:N|field:value|...|version:V = SCORE[ DETAILS]".
// The fields are sacreBLEU's, so that a score states how it was computed; the version is
// rnnsearch's, "rnnsearch-0.1.0": these scores are computed as sacreBLEU 2.x computes them
// (checked against sacreBLEU 2.6.0's published test figures), not by sacreBLEU.
#include <string>
#include <utility>
#include <vector>

#include "rnnsearch/error.h"

namespace rnnsearch {

// "rnnsearch-" and the project version of CMakeLists.txt.
std::string metric_version();

// "NAME|nrefs:N|k1:v1|k2:v2|version:rnnsearch-X".
std::string signature_line(const std::string& name, size_t references,
                           const std::vector<std::pair<std::string, std::string>>& fields);

// The score as sacreBLEU prints it: `width` decimals ("%.*f").
std::string fixed_decimals(double score, int width);

// "SIGNATURE = SCORE" with `width` decimals, then " DETAILS" when there are any.
std::string score_line(const std::string& signature, double score, int width, const std::string& details = "");

// What every corpus metric checks first: each reference stream (references[k][s] is the k-th
// reference of segment s) has one entry per hypothesis. Throws rnnsearch::Error
// "METRIC: N hypotheses but M references".
template <class Stream>
void check_reference_streams(const std::string& metric, size_t hypotheses, const std::vector<Stream>& references) {
  for (const Stream& stream : references)
    if (stream.size() != hypotheses)
      throw Error(metric + ": " + std::to_string(hypotheses) + " hypotheses but " + std::to_string(stream.size()) +
                  " references");
}

}  // namespace rnnsearch

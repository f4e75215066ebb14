#include "rnnsearch/metrics/signature.h"

#include <cstdio>

#include "rnnsearch/util/build_info.h"

namespace rnnsearch {

std::string metric_version() { return "rnnsearch-" + build_info().version; }

std::string signature_line(const std::string& name, size_t references,
                           const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string line = name + "|nrefs:" + std::to_string(references);
  for (const auto& [key, value] : fields) line += "|" + key + ":" + value;
  return line + "|version:" + metric_version();
}

std::string fixed_decimals(double score, int width) {
  char number[64];
  std::snprintf(number, sizeof number, "%.*f", width, score);
  return number;
}

std::string score_line(const std::string& signature, double score, int width, const std::string& details) {
  return signature + " = " + fixed_decimals(score, width) + (details.empty() ? "" : " " + details);
}

}  // namespace rnnsearch

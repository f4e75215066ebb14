#include "rnnsearch/align/reading.h"

#include <cstdio>
#include <cstdlib>

#include "rnnsearch/error.h"
#include "rnnsearch/output/alignment.h"

namespace rnnsearch::align {

namespace {

const char* kMethods = "argmax, threshold:X, average or average-threshold:X (0 < X <= 1)";

// The mean of two matrices of one shape.
Alignment mean(const Alignment& a, const Alignment& b) {
  Alignment m = a;
  for (size_t k = 0; k < m.weights.size(); ++k) m.weights[k] = 0.5f * (a.weights[k] + b.weights[k]);
  return m;
}

}  // namespace

AlignMethod parse_align_method(const std::string& name) {
  AlignMethod method;
  std::string rest = name;
  if (rest == "average") {
    method.average = true;
    return method;
  }
  if (rest.rfind("average-", 0) == 0) {
    method.average = true;
    rest = rest.substr(8);
  }
  if (rest == "argmax" && !method.average) return method;
  if (rest.rfind("threshold:", 0) == 0) {
    const std::string number = rest.substr(10);
    char* end = nullptr;
    method.threshold = true;
    method.weight = std::strtod(number.c_str(), &end);
    if (!number.empty() && end == number.c_str() + number.size() && method.weight > 0 && method.weight <= 1)
      return method;
  }
  throw Error("--method must be " + std::string(kMethods) + ", not '" + name + "'");
}

std::string align_method_name(const AlignMethod& method) {
  if (!method.threshold) return method.average ? "average" : "argmax";
  char weight[32];
  std::snprintf(weight, sizeof weight, "%g", method.weight);
  return std::string(method.average ? "average-" : "") + "threshold:" + weight;
}

// argmax is the hard alignment `score --alignment hard` prints (output/alignment.h), less its
// pairs on the source </s> column.
Links read_links(const Alignment& attention, const AlignMethod& method) {
  Links links;
  const int source_words = attention.cols - 1, target_words = attention.rows - 1;
  if (!method.threshold) {
    for (const auto& [source, target] : hard_alignment(attention))
      if (source < source_words) links.push_back({source, target});
    return sorted_links(std::move(links));
  }
  for (int j = 0; j < source_words; ++j)
    for (int i = 0; i < target_words; ++i)
      if (attention.at(i, j) >= method.weight) links.push_back({j, i});
  return links;
}

Alignment transposed(const Alignment& attention) {
  Alignment t{attention.cols, attention.rows, std::vector<float>(attention.weights.size())};
  for (int i = 0; i < attention.rows; ++i)
    for (int j = 0; j < attention.cols; ++j) t.weights[static_cast<size_t>(j) * t.cols + i] = attention.at(i, j);
  return t;
}

Links swapped(const Links& links) {
  Links other;
  for (const Link& l : links) other.push_back({l.target, l.source});
  return sorted_links(std::move(other));
}

Links column_links(const Alignment& attention) {
  Links links;
  const int source_words = attention.cols - 1, target_words = attention.rows - 1;
  for (int j = 0; j < source_words; ++j) {
    int best = 0;
    for (int i = 1; i < attention.rows; ++i)
      if (attention.at(i, j) > attention.at(best, j)) best = i;
    if (best < target_words && attention.at(best, j) >= kColumnFloor) links.push_back({j, best});
  }
  return sorted_links(std::move(links));
}

Links pair_links(const Alignment& forward, const Alignment* reverse, const AlignMethod& method,
                 std::optional<Symmetrization> symmetrize) {
  // One matrix (one model's, or two models' averaged) with --symmetrize: read both ways
  const auto both_ways = [&](const Alignment& m) {
    return symmetrize ? align::symmetrize(read_links(m, method), column_links(m), m.cols - 1, m.rows - 1, *symmetrize)
                      : read_links(m, method);
  };
  if (!reverse) return both_ways(forward);
  if (method.average) return both_ways(mean(forward, transposed(*reverse)));
  return align::symmetrize(read_links(forward, method), swapped(read_links(*reverse, method)), forward.cols - 1,
                           forward.rows - 1, *symmetrize);
}

void split_parallel_line(const std::string& line, std::string& source, std::string& target, const std::string& file,
                         size_t line_number) {
  const auto space = [&](size_t at) { return line[at] == ' ' || line[at] == '\t'; };
  for (size_t at = line.find("|||"); at != std::string::npos; at = line.find("|||", at + 1)) {
    if ((at > 0 && !space(at - 1)) || (at + 3 < line.size() && !space(at + 3))) continue;
    source = line.substr(0, at);
    target = line.substr(at + 3);
    return;
  }
  throw Error(located(file, line_number, "no ' ||| ' between source and target (expected SOURCE ||| TARGET)"));
}

std::optional<Symmetrization> resolved_symmetrization(bool two_models, const AlignMethod& method,
                                                      std::optional<Symmetrization> symmetrize) {
  if (!two_models && method.average)
    throw Error("--method " + align_method_name(method) + " averages two models' attention: give --reverse-model");
  if (symmetrize && method.threshold && (!two_models || method.average))
    throw Error("--symmetrize on one matrix (" + std::string(two_models ? "the two models' average" : "one model") +
                ") reads its rows and its columns by argmax, --method " + align_method_name(method) +
                " reads its cells: give one");
  if (two_models && !method.average && !symmetrize) return Symmetrization::grow_diag_final_and;
  return symmetrize;
}

}  // namespace rnnsearch::align

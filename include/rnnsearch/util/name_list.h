#pragma once
// Comma-separated lists of names given to an option: --metrics bleu,chrf, --valid-metrics
// cross-entropy,bleu.
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rnnsearch/error.h"

namespace rnnsearch {

// The values of the names in `list`, in its order: "b,a" -> {value of b, value of a}.
// Throws rnnsearch::Error "OPTION: unknown metric 'x' (expected a, b and/or c)" for a name
// not in `names`, and "OPTION must name at least one metric" for an empty list.
template <class T>
std::vector<T> parse_name_list(const std::string& option, const std::string& list,
                               const std::vector<std::pair<std::string, T>>& names) {
  std::vector<T> values;
  std::istringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    bool known = false;
    for (const auto& [name, value] : names)
      if (item == name) {
        values.push_back(value);
        known = true;
        break;
      }
    if (known) continue;
    std::string expected;
    for (size_t k = 0; k < names.size(); ++k)
      expected += (k == 0 ? "" : k + 1 == names.size() ? " and/or " : ", ") + names[k].first;
    throw Error(option + ": unknown metric '" + item + "' (expected " + expected + ")");
  }
  if (values.empty()) throw Error(option + " must name at least one metric");
  return values;
}

}  // namespace rnnsearch

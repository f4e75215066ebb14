#include "rnnsearch/decode/unk_replacement.h"

#include <sstream>

#include "rnnsearch/error.h"
#include "rnnsearch/text/line_reader.h"

namespace rnnsearch {

UnkReplacement UnkReplacement::load(const std::string& dictionary_path) {
  UnkReplacement replacement;
  LineReader reader(dictionary_path);
  for (std::string line; next_valid_line(reader, line);) {
    std::istringstream fields(line);
    std::string source, target, extra;
    if (!(fields >> source >> target) || (fields >> extra))
      throw Error(located(dictionary_path, reader.line_number(), "expected 'source target', got '" + line + "'"));
    replacement.dictionary_.emplace(source, target);  // the first entry of a word wins
  }
  return replacement;
}

void UnkReplacement::apply(const std::vector<std::string>& source, Hypothesis& h) const {
  if (source.empty() || h.alignment.rows == 0) return;
  for (size_t i = 0; i < h.words.size(); ++i) {
    if (h.words[i] != "<unk>") continue;
    size_t best = 0;  // argmax over the source words, </s> (the last column) excluded
    for (size_t j = 1; j < source.size(); ++j)
      if (h.alignment.at(static_cast<int>(i), static_cast<int>(j)) >
          h.alignment.at(static_cast<int>(i), static_cast<int>(best)))
        best = j;
    const auto entry = dictionary_.find(source[best]);
    h.words[i] = entry == dictionary_.end() ? source[best] : entry->second;
  }
}

}  // namespace rnnsearch

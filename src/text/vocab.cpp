#include "rnnsearch/text/vocab.h"

#include <algorithm>
#include <utility>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/text/line_reader.h"

namespace rnnsearch {
namespace {

const char* const kSpecials[] = {"<pad>", "<unk>", "<s>", "</s>"};
constexpr size_t kNumSpecials = sizeof(kSpecials) / sizeof(kSpecials[0]);

bool is_special(const std::string& token) {
  return std::find(std::begin(kSpecials), std::end(kSpecials), token) != std::end(kSpecials);
}

}  // namespace

Vocab::Vocab() {
  for (const char* special : kSpecials) add(special);
}

void Vocab::add(const std::string& token) {
  ids_.emplace(token, static_cast<int>(tokens_.size()));
  tokens_.push_back(token);
}

Vocab Vocab::build(const std::vector<std::vector<std::string>>& sentences, int min_count,
                   size_t max_size) {
  TokenCounts counts;
  for (const auto& sentence : sentences)
    for (const auto& token : sentence) ++counts[token];
  return build(counts, min_count, max_size);
}

Vocab Vocab::build(const TokenCounts& counts, int min_count, size_t max_size) {
  if (max_size != 0 && max_size < kNumSpecials)
    throw Error("vocabulary max size " + std::to_string(max_size) +
                " leaves no room for the four special tokens");
  std::vector<std::pair<std::string, long>> kept;
  for (auto& [token, count] : counts)
    // A literal "<unk>" in the text must not become a second id for the special.
    if (count >= min_count && !is_special(token)) kept.emplace_back(token, count);
  // Most frequent first; std::string compares bytes as unsigned char, and UTF-8 byte order
  // is code-point order, so ties come out as in the reference's sorted(key=(-count, word)).
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (max_size != 0) kept.resize(std::min(kept.size(), max_size - kNumSpecials));

  Vocab vocab;
  for (const auto& entry : kept) vocab.add(entry.first);
  return vocab;
}

Vocab Vocab::load(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  if (lines.size() < kNumSpecials)
    throw Error(located(path, 0, "too short: a vocabulary starts with <pad> <unk> <s> </s>"));
  Vocab vocab;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& token = lines[i];
    const size_t line = i + 1;
    if (i < kNumSpecials) {
      if (token != kSpecials[i])
        throw Error(located(path, line, "expected " + std::string(kSpecials[i]) + ", found '" +
                                            token + "' (ids 0..3 are <pad> <unk> <s> </s>)"));
      continue;  // the constructor added the specials already
    }
    if (token.empty()) throw Error(located(path, line, "empty line"));
    if (token.find_first_of(" \t\r\v\f") != std::string::npos)
      throw Error(located(path, line, "'" + token + "' contains white space, which no token can"));
    auto previous = vocab.ids_.find(token);
    if (previous != vocab.ids_.end())
      throw Error(located(path, line, "duplicate token '" + token + "' (first on line " +
                                          std::to_string(previous->second + 1) + ")"));
    vocab.add(token);
  }
  return vocab;
}

void Vocab::save(const std::string& path) const {
  std::string content;
  for (const auto& token : tokens_) content += token + '\n';
  write_file_atomically(path, content);
}

int Vocab::id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? kUnk : it->second;
}

std::vector<int> Vocab::encode(const std::vector<std::string>& tokens) const {
  std::vector<int> ids;
  ids.reserve(tokens.size() + 1);
  for (const auto& token : tokens) ids.push_back(id(token));
  ids.push_back(kEos);
  return ids;
}

std::vector<std::string> Vocab::decode(const std::vector<int>& ids) const {
  std::vector<std::string> tokens;
  for (int id : ids) {
    if (id == kEos) break;
    if (id == kPad || id == kBos) continue;
    tokens.push_back(token(id));
  }
  return tokens;
}

}  // namespace rnnsearch

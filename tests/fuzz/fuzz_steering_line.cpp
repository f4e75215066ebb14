// A line of translate's --constraints and one of its --avoid (decode/steering.h): the input up to
// its first newline is the constraints line, the rest the avoid line, each through
// parse_phrase_line, then the pair through check_steering, as translate reads them.
// rnnsearch::Error is the documented refusal. Properties of what is accepted: every phrase is
// valid UTF-8 and goes through JSON and back unchanged; at most 64 constraints; no constraint
// is, word for word, a phrase to avoid.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "rnnsearch/decode/steering.h"
#include "rnnsearch/error.h"
#include "rnnsearch/text/tokenizer.h"

using namespace rnnsearch;

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

std::vector<std::string> words_of(const std::string& phrase) {
  std::istringstream in(phrase);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string constraints_line = input.substr(0, newline);
  const std::string avoid_line = newline == std::string::npos ? "" : input.substr(newline + 1);
  LineSteering steering;
  try {
    steering.constraints = parse_phrase_line(constraints_line, "constraints");
    steering.avoid = parse_phrase_line(avoid_line, "avoid");
  } catch (const Error& e) {
    check(*e.what() != '\0');
    return 0;
  }
  for (const auto* phrases : {&steering.constraints, &steering.avoid}) {
    for (const std::string& phrase : *phrases) check(is_valid_utf8(phrase));
    check(nlohmann::json::parse(nlohmann::json(*phrases).dump()).get<std::vector<std::string>>() == *phrases);
  }
  try {
    check_steering(steering);
  } catch (const Error& e) {
    check(*e.what() != '\0');
    return 0;
  }
  check(steering.constraints.size() <= kMaxConstraints);
  for (const std::string& avoid : steering.avoid)
    for (const std::string& constraint : steering.constraints)
      check(words_of(avoid).empty() || words_of(avoid) != words_of(constraint));
  return 0;
}

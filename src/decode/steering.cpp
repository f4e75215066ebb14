#include "rnnsearch/decode/steering.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/error.h"
#include "rnnsearch/text/pharaoh.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/text/vocab.h"

namespace rnnsearch {

using nlohmann::json;

namespace {

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

// The words of a phrase (split at white space): what "holds as whole words" compares.
std::vector<std::string> words_of(const std::string& phrase) {
  std::vector<std::string> words;
  for (std::string_view word : white_space_tokens(phrase)) words.emplace_back(word);
  return words;
}

// A phrase as an error message quotes it: JSON's string syntax, so that quotes and control
// characters in it cannot break the one line.
std::string quoted(const std::string& phrase) { return json(phrase).dump(); }

}  // namespace

bool phrase_list(const json& value, std::vector<std::string>& phrases) {
  if (!value.is_array()) return false;
  for (const json& item : value)
    if (!item.is_string()) return false;
  phrases = value.get<std::vector<std::string>>();
  return true;
}

std::vector<std::string> parse_phrase_line(const std::string& line, const std::string& option) {
  if (!is_valid_utf8(line)) throw Error("invalid UTF-8");
  if (blank(line)) return {};
  std::vector<std::string> phrases;
  if (!phrase_list(json::parse(line, nullptr, false), phrases))
    throw Error("--" + option + " wants a JSON list of strings per line, e.g. [\"ein Hund\", \"rot\"], not: " + line);
  return phrases;
}

JsonInputLine parse_json_input_line(const std::string& line) {
  if (!is_valid_utf8(line)) throw Error("invalid UTF-8");
  JsonInputLine result;
  if (blank(line)) return result;
  const json value = json::parse(line, nullptr, false);
  if (!value.is_object())
    throw Error("--json-input wants a JSON object per line, e.g. {\"text\": \"a dog\", \"constraints\": [\"Hund\"]}");
  if (!value.contains("text")) throw Error("--json-input: the line has no \"text\"");
  for (const auto& [key, field] : value.items()) {
    if (key == "text" || key == "target_prefix") {
      if (!field.is_string()) throw Error("--json-input: \"" + key + "\" must be a string");
      (key == "text" ? result.text : result.steering.prefix) = field.get<std::string>();
    } else if (key == "constraints" || key == "avoid") {
      if (!phrase_list(field, key == "avoid" ? result.steering.avoid : result.steering.constraints))
        throw Error("--json-input: \"" + key + "\" must be a list of strings");
    } else {
      throw Error("--json-input: unknown key " + quoted(key) + " (known: text, constraints, avoid, target_prefix)");
    }
  }
  return result;
}

void check_steering(const LineSteering& steering) {
  for (const auto& [phrases, what] : {std::pair{&steering.constraints, "a constraint"}, std::pair{&steering.avoid, "a phrase to avoid"}})
    for (const std::string& phrase : *phrases)
      if (!is_valid_utf8(phrase)) throw Error(std::string(what) + " is not valid UTF-8");
  if (steering.constraints.size() > kMaxConstraints)
    throw Error(std::to_string(steering.constraints.size()) + " constraints; the limit is " +
                std::to_string(kMaxConstraints) + " per sentence");
  for (const std::string& avoid : steering.avoid) {
    const std::vector<std::string> avoided = words_of(avoid);
    if (avoided.empty()) continue;
    for (const std::string& constraint : steering.constraints) {
      const std::vector<std::string> words = words_of(constraint);
      if (words == avoided)
        throw Error(quoted(constraint) + " is both a constraint and a phrase to avoid");
      if (std::search(words.begin(), words.end(), avoided.begin(), avoided.end()) != words.end())
        throw Error("the constraint " + quoted(constraint) + " holds the phrase to avoid " + quoted(avoid));
    }
  }
}

void check_sentence_steering(const SentenceSteering& steering) {
  const auto check = [](const std::vector<int>& tokens, const char* what) {
    for (int w : tokens)
      if (w == Vocab::kEos || w == Vocab::kBos || w == Vocab::kPad)
        throw Error(std::string("beam search: ") + what + " holds </s>, <s> or <pad>");
  };
  check(steering.prefix, "a target prefix");
  for (const auto& phrase : steering.constraints.include) check(phrase, "a constraint");
  for (const auto& phrase : steering.constraints.avoid) check(phrase, "a phrase to avoid");
  if (steering.constraints.include.size() > kMaxConstraints)
    throw Error("beam search: more than 64 constraints for one sentence");
  for (const auto* phrases : {&steering.constraints.include, &steering.constraints.avoid})
    for (const auto& phrase : *phrases)
      if (phrase.empty()) throw Error("beam search: an empty constraint");
}

void check_constraints_allowed(const BeamOptions& beam) {
  if (beam.samples() || beam.alternatives > 0)
    throw Error("constraints need beam search: not with sampling (--sampling-topk other than 1) or --alternatives");
}

void check_steering(const LineSteering& steering, const BeamOptions& beam) {
  check_steering(steering);
  if (!steering.constraints.empty()) check_constraints_allowed(beam);
}

std::vector<LineSteering> sentence_steering(size_t sentences, SteeringLists lists, const BeamOptions& beam,
                                            const std::string& name) {
  const auto length = [&](size_t given, const char* field) {
    if (given != sentences)
      throw Error(name + " and " + field + " differ in length: " + std::to_string(sentences) + " and " +
                  std::to_string(given) + " sentences");
  };
  if (lists.target_prefix) length(lists.target_prefix->size(), "target_prefix");
  if (lists.constraints) length(lists.constraints->size(), "constraints");
  if (lists.avoid) length(lists.avoid->size(), "avoid");
  if (!lists.target_prefix && !lists.constraints && !lists.avoid) return {};
  std::vector<LineSteering> steering(sentences);
  for (size_t k = 0; k < sentences; ++k) {
    if (lists.target_prefix) steering[k].prefix = std::move((*lists.target_prefix)[k]);
    if (lists.constraints) steering[k].constraints = std::move((*lists.constraints)[k]);
    if (lists.avoid) steering[k].avoid = std::move((*lists.avoid)[k]);
    try {
      check_steering(steering[k], beam);
    } catch (const Error& e) {
      throw SteeringRefused(name.empty() ? std::string(e.what()) : name + "[" + std::to_string(k) + "]: " + e.what());
    }
  }
  return steering;
}

std::vector<LineSteering> json_input_lines(std::vector<std::string>& lines, const std::string& file,
                                           size_t first_line, const BeamOptions& beam) {
  std::vector<LineSteering> steering(lines.size());
  bool any = false;
  for (size_t k = 0; k < lines.size(); ++k) {
    try {
      JsonInputLine line = parse_json_input_line(lines[k]);
      check_steering(line.steering, beam);
      lines[k] = std::move(line.text);
      any = any || !line.steering.empty();
      steering[k] = std::move(line.steering);
    } catch (const Error& e) {
      throw Error(located(file, first_line + k + 1, e.what()));
    }
  }
  if (!any) steering.clear();
  return steering;
}

}  // namespace rnnsearch

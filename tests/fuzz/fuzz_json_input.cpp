// Lines of translate --json-input, Sockeye's JSON input (decode/steering.h): the input as the
// lines of a file, through json_input_lines, as translate reads a chunk of them (beam search,
// or sampling when the first byte is odd). rnnsearch::Error, "FILE:LINE: problem", is the
// documented refusal, and it names a line of the input. Properties of what is accepted: one
// sentence per line, each text and phrase valid UTF-8, the steering empty or one per line, and
// each non-blank line's fields those parse_json_input_line gives again.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/decode/steering.h"
#include "rnnsearch/error.h"
#include "rnnsearch/text/tokenizer.h"

using namespace rnnsearch;

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  BeamOptions beam;
  if (data[0] & 1) beam.sampling_topk = 3;
  std::vector<std::string> lines;
  const std::string input(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (size_t start = 0; start <= input.size();) {
    const size_t end = std::min(input.find('\n', start), input.size());
    lines.push_back(input.substr(start, end - start));
    start = end + 1;
  }
  const std::vector<std::string> read = lines;
  std::vector<LineSteering> steering;
  try {
    steering = json_input_lines(lines, "in.jsonl", 0, beam);
  } catch (const Error& e) {
    const std::string message = e.what();
    check(message.rfind("in.jsonl:", 0) == 0);
    const size_t line = std::strtoul(message.c_str() + 9, nullptr, 10);
    check(line >= 1 && line <= read.size());
    return 0;
  }
  check(lines.size() == read.size());
  check(steering.empty() || steering.size() == lines.size());
  for (size_t k = 0; k < lines.size(); ++k) {
    check(is_valid_utf8(lines[k]));
    const JsonInputLine again = parse_json_input_line(read[k]);
    check(again.text == lines[k]);
    if (steering.empty()) {
      check(again.steering.empty());
      continue;
    }
    check(again.steering.constraints == steering[k].constraints && again.steering.avoid == steering[k].avoid &&
          again.steering.prefix == steering[k].prefix);
    check(steering[k].constraints.empty() || !beam.samples());
    for (const auto* phrases : {&steering[k].constraints, &steering[k].avoid})
      for (const std::string& phrase : *phrases) check(is_valid_utf8(phrase));
  }
  return 0;
}

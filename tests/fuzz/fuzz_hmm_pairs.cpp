// A few sentence pairs through the HMM aligner of `rnnsearch align --hmm` (align/hmm.h): the
// input is 'SOURCE ||| TARGET' lines as `align -i` reads them, its first byte picking the
// options (a prior of 0, 0.1 or 1e-300, p0 0 or 0.2, whole words or stems, agreement,
// symmetrization or averaging). Short runs (2 + 2 iterations, --max-length 40) keep it fast.
// Every pair gets a result in order; an aligned pair's links are sorted and inside its
// words; a pair left out has no links and a warning.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "rnnsearch/align/aligner.h"
#include "rnnsearch/align/hmm_tables.h"
#include "rnnsearch/error.h"

using namespace rnnsearch;
using namespace rnnsearch::align;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t choice = data[0];
  HmmOptions options;
  options.ibm1_iterations = 2;
  options.hmm_iterations = 2;
  options.max_length = 40;
  options.prior = (choice & 3) == 0 ? 0.0 : (choice & 3) == 3 ? 1e-300 : 0.1;
  options.null_probability = choice & 4 ? 0.0 : 0.2;
  options.stem = choice & 8 ? 0 : 3;
  options.agreement = !(choice & 16);
  AlignMethod method;
  if (choice & 32) method = parse_align_method(choice & 64 ? "average" : "threshold:0.3");
  const std::string path = "pairs.txt";
  try {
    // read whole, not UTF-8-checked, as align reads its lines
    const std::vector<std::string> lines =
        fuzz::lines(std::string(reinterpret_cast<const char*>(data) + 1, size - 1), path, false);
    std::vector<std::string> sources(lines.size()), targets(lines.size());
    for (size_t k = 0; k < lines.size(); ++k) split_parallel_line(lines[k], sources[k], targets[k], path, k + 1);
    const std::vector<AlignedPair> pairs = hmm_align(sources, targets, options, method, std::nullopt);
    if (pairs.size() != lines.size()) std::abort();
    for (size_t k = 0; k < pairs.size(); ++k) {
      const AlignedPair& pair = pairs[k];
      if (pair.line != k || pair.aligned != pair.warning.empty()) std::abort();
      if (!pair.aligned && !pair.links.empty()) std::abort();
      if (!std::is_sorted(pair.links.begin(), pair.links.end())) std::abort();
      for (const Link& link : pair.links)
        if (link.source < 0 || link.target < 0 || static_cast<size_t>(link.source) >= pair.source.size() ||
            static_cast<size_t>(link.target) >= pair.target.size())
          std::abort();
    }
  } catch (const Error&) {
  }
  return 0;
}

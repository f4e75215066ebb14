#pragma once
// Checks of numeric option values, worded once for every caller: the command line's option
// notifiers (src/cli/options.cpp), the decoders' option checks and the Python module. Each
// throws a one-line rnnsearch::Error naming the option (as the command line spells it) and
// the value. NaN fails every check.
#include <cmath>
#include <sstream>
#include <string>

#include "rnnsearch/error.h"

namespace rnnsearch {

// "--OPTION must be REQUIREMENT, not VALUE"
inline void fail_check(const std::string& option, const std::string& requirement, double value) {
  std::ostringstream text;
  text << "--" << option << " must be " << requirement << ", not " << value;
  throw Error(text.str());
}

inline void check_at_least(const std::string& option, long value, long minimum) {
  if (value < minimum)
    throw Error("--" + option + " must be at least " + std::to_string(minimum) + ", not " + std::to_string(value));
}

inline void check_between(const std::string& option, long value, long minimum, long maximum) {
  if (value < minimum || value > maximum)
    throw Error("--" + option + " must be between " + std::to_string(minimum) + " and " + std::to_string(maximum) +
                ", not " + std::to_string(value));
}

inline void check_non_negative(const std::string& option, double value) {  // finite, >= 0
  if (!(std::isfinite(value) && value >= 0)) fail_check(option, "a number >= 0", value);
}

inline void check_below_one(const std::string& option, double value) {  // in [0, 1)
  if (!(value >= 0 && value < 1)) fail_check(option, "in [0, 1)", value);
}

}  // namespace rnnsearch

#include "rnnsearch/model/precision.h"

#include <stdexcept>

namespace rnnsearch {

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::fp32;
  if (name == "bf16") return Precision::bf16;
  if (name == "int8") return Precision::int8;
  throw std::invalid_argument("precision must be fp32, bf16 or int8, not '" + name + "'");
}

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::bf16: return "bf16";
    case Precision::int8: return "int8";
  }
  return "fp32";  // not reached: the switch names every precision
}

}  // namespace rnnsearch

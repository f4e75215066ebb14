#include "rnnsearch/kernels/precision.h"

#include <iostream>
#include <stdexcept>

#include "rnnsearch/error.h"
#include "rnnsearch/kernels/bf16.h"
#include "rnnsearch/kernels/int8.h"

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

Precision precision_option(const std::string& name, PrecisionUse use) {
  // auto: the fastest precision that kept BLEU (docs/design.md §5) among those this CPU runs
  // natively; the int8 projection only in decoding
  const bool bf16 = use == PrecisionUse::training ? bf16_training_supported() : bf16_supported();
  if (name == "auto") {
    if (use == PrecisionUse::decoding && int8_supported()) return Precision::int8;
    return bf16 ? Precision::bf16 : Precision::fp32;
  }
  if (name == "int8" && use == PrecisionUse::training)
    throw Error("--precision int8 is for translate: training needs fp32 or bf16 gradients");
  Precision precision;
  try {
    precision = parse_precision(name);
  } catch (const std::invalid_argument&) {
    throw Error("--precision must be auto, fp32, bf16 or int8, not '" + name + "'");
  }
  if (precision == Precision::bf16 && !bf16) {
    std::cerr << "rnnsearch: --precision bf16 needs a CPU with AVX512_BF16 and a build with oneDNN"
              << (use == PrecisionUse::training ? " and OpenBLAS" : "") << "; computing in fp32\n";
    return Precision::fp32;
  }
  if (precision == Precision::int8 && !int8_supported()) {
    std::cerr << "rnnsearch: --precision int8 needs a CPU with AVX2 and a build with oneDNN; computing in fp32\n";
    return Precision::fp32;
  }
  return precision;
}

}  // namespace rnnsearch

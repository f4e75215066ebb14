#pragma once
// The precision of the output layer's vocabulary projection (docs/design.md §5): fp32, bf16
// products with fp32 sums (kernels/bf16.h), or int8 products with int32 sums, for decoding
// only (kernels/int8.h). Every other computation is fp32.
#include <string>

namespace rnnsearch {

enum class Precision { fp32, bf16, int8 };

// "fp32", "bf16" or "int8"; anything else throws std::invalid_argument.
Precision parse_precision(const std::string& name);
const char* precision_name(Precision precision);

// The precision a --precision NAME runs in (what `translate`, `train` and the Python module
// use): bf16 and int8 only where they run natively (kernels/bf16.h, kernels/int8.h), else fp32
// with a note on stderr. auto: int8 (decoding), else bf16, else fp32, the first this CPU runs
// natively. Throws rnnsearch::Error if NAME is unknown, or int8 in training.
enum class PrecisionUse { training, decoding };
Precision precision_option(const std::string& name, PrecisionUse use);

}  // namespace rnnsearch

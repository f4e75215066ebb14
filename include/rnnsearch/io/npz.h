#pragma once
// numpy's .npz: a zip archive of .npy arrays in C order: float32 weights, int64 counters
// (docs/design.md §2).
// Written through libzip (stored, uncompressed: models load faster and barely compress) to
// a temporary file renamed into place; read back with every header field validated.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rnnsearch {

struct NpyArray {
  std::vector<long> shape;  // () for a scalar, (n,) for a vector, (r, c) for a matrix
  std::vector<float> data;  // a float32 ('<f4') array's values
  std::vector<std::int64_t> integers;  // an int64 ('<i8') array's values; then data is empty
  bool is_integer = false;
  size_t size() const;      // product of shape
};

struct NpyArrayView {
  std::string name;         // without ".npy"
  std::vector<long> shape;
  const float* data;                       // float32 values, or
  const std::int64_t* integers = nullptr;  // int64 values (then data is null)
};

// Atomic: writes PATH.tmp.PID, then renames.
void save_npz(const std::string& path, const std::vector<NpyArrayView>& arrays);

// Throws rnnsearch::Error naming the file (and array) when the file is missing, not a zip,
// truncated or corrupt (CRC), or an array is not a float32/int64 C-order .npy of consistent
// size. Memory grows with the bytes actually read, never with a size the file claims.
std::map<std::string, NpyArray> load_npz(const std::string& path);

// The .npy encoding of one array (exposed for the tests).
std::string encode_npy(const std::vector<long>& shape, const float* data);
std::string encode_npy(const std::vector<long>& shape, const std::int64_t* integers);
NpyArray decode_npy(const std::string& bytes, const std::string& what);

}  // namespace rnnsearch

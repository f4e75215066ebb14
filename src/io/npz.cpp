#include "rnnsearch/io/npz.h"

#include <zip.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>
#include <regex>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"

namespace rnnsearch {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
// Every entry gets the same timestamp (1980-01-06, the start of the zip format's calendar
// plus a margin for time zones) so that equal weights give byte-identical files.
constexpr time_t kEntryTime = 315964800;
constexpr size_t kMagicLen = 6;
constexpr char kFloat32[] = "<f4", kInt64[] = "<i8";

std::string shape_text(const std::vector<long>& shape) {
  std::string s = "(";
  for (size_t k = 0; k < shape.size(); ++k) s += std::to_string(shape[k]) + (shape.size() == 1 ? "," : k + 1 < shape.size() ? ", " : "");
  return s + ")";
}

std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

// Format 1.0: magic, version, little-endian uint16 header length, a Python dict literal
// padded with spaces to a multiple of 64 bytes and ending in '\n', then the raw data.
std::string npy_header(const std::vector<long>& shape, const char* descr) {
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  const size_t unpadded = kMagicLen + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  return out + header;
}

size_t element_count(const std::vector<long>& shape) {
  size_t count = 1;
  for (long d : shape) count *= static_cast<size_t>(d);
  return count;
}

// The array's raw bytes (little-endian, as the host): what follows the header.
std::pair<const void*, size_t> npy_data(const NpyArrayView& a) {
  const size_t count = element_count(a.shape);
  if (a.integers) return {a.integers, count * sizeof(std::int64_t)};
  return {a.data, count * sizeof(float)};
}

template <typename T>
std::string encode_npy_as(const std::vector<long>& shape, const char* descr, const T* data) {
  std::string out = npy_header(shape, descr);
  const size_t count = element_count(shape);
  if (count > 0) out.append(reinterpret_cast<const char*>(data), count * sizeof(T));  // data may be null
  return out;
}

// The entry's size field is only a claim: the buffer grows with the bytes actually read, so
// a corrupt or hostile size costs no more memory than the data behind it. Reading to the end
// also makes libzip check the CRC.
std::string read_entry(zip_file_t* file, zip_uint64_t claimed_size, const std::string& what) {
  constexpr size_t kChunk = size_t{1} << 20;
  std::string bytes;
  for (;;) {
    // One byte past the claim, so that an entry longer than it claims is noticed.
    const size_t before = bytes.size(), want = std::min<size_t>(kChunk, claimed_size + 1 - before);
    bytes.resize(before + want);
    const zip_int64_t got = zip_fread(file, bytes.data() + before, want);
    if (got < 0) throw Error(what + ": cannot be read: " + zip_file_strerror(file));
    bytes.resize(before + static_cast<size_t>(got));
    if (got == 0 || bytes.size() > claimed_size) break;
  }
  if (bytes.size() != claimed_size)
    throw Error(what + ": holds " + std::to_string(bytes.size()) + (bytes.size() > claimed_size ? "+" : "") +
                " bytes, its zip entry claims " + std::to_string(claimed_size));
  return bytes;
}

}  // namespace

size_t NpyArray::size() const {
  size_t n = 1;
  for (long d : shape) n *= static_cast<size_t>(d);
  return n;
}

std::string encode_npy(const std::vector<long>& shape, const float* data) {
  return encode_npy_as(shape, kFloat32, data);
}

std::string encode_npy(const std::vector<long>& shape, const std::int64_t* integers) {
  return encode_npy_as(shape, kInt64, integers);
}

NpyArray decode_npy(const std::string& bytes, const std::string& what) {
  auto fail = [&](const std::string& problem) { return Error(what + ": " + problem); };
  if (bytes.size() < 10 || bytes.compare(0, kMagicLen, kMagic, kMagicLen) != 0) throw fail("not a .npy array");
  const unsigned char major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw fail("truncated .npy header");
    for (int k = 3; k >= 0; --k) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + k]);
    offset = 12;
  } else {
    throw fail("unsupported .npy version " + std::to_string(major));
  }
  if (bytes.size() < offset + header_len) throw fail("truncated .npy header");
  const std::string header = bytes.substr(offset, header_len);
  static const std::regex descr(R"('descr'\s*:\s*'([^']*)')"), order(R"('fortran_order'\s*:\s*(True|False))"),
      shape_re(R"('shape'\s*:\s*\(([^)]*)\))");
  std::smatch m;
  if (!std::regex_search(header, m, descr)) throw fail("no dtype in .npy header");
  NpyArray array;
  array.is_integer = m[1] == kInt64;
  if (m[1] != kFloat32 && !array.is_integer)
    throw fail("dtype " + m[1].str() + ", expected float32 ('<f4') or int64 ('<i8')");
  const size_t element_size = array.is_integer ? sizeof(std::int64_t) : sizeof(float);
  if (!std::regex_search(header, m, order) || m[1] != "False") throw fail("not in C order");
  if (!std::regex_search(header, m, shape_re)) throw fail("no shape in .npy header");
  const std::string dims = m[1];
  static const std::regex number(R"(\d+)");
  const size_t available = bytes.size() - offset - header_len;
  // Each dimension is checked against the data actually present before it is multiplied in,
  // so a corrupt header can neither overflow the element count nor request a huge buffer.
  size_t count = 1;
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), number); it != std::sregex_iterator(); ++it) {
    const std::string digits = it->str();
    long dim = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), dim);
    if (error != std::errc() || end != digits.data() + digits.size() ||
        (dim > 0 && count > available / element_size / static_cast<size_t>(dim)))
      throw fail("shape (" + dims + ") does not fit its " + std::to_string(available) + " data bytes (truncated?)");
    count *= static_cast<size_t>(dim);
    array.shape.push_back(dim);
  }
  const size_t expected = count * element_size;
  if (available != expected)
    throw fail("holds " + std::to_string(available) + " data bytes, shape " + shape_text(array.shape) +
               " needs " + std::to_string(expected) + " (truncated?)");
  void* values = nullptr;
  if (array.is_integer) {
    array.integers.resize(count);
    values = array.integers.data();
  } else {
    array.data.resize(count);
    values = array.data.data();
  }
  // (memcpy from the null data() of an empty vector is undefined, even for 0 bytes)
  if (expected > 0) std::memcpy(values, bytes.data() + offset + header_len, expected);
  return array;
}

void save_npz(const std::string& path, const std::vector<NpyArrayView>& arrays) {
  write_atomically(path, [&](const std::string& tmp) {
    int code = 0;
    zip_t* archive = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (!archive) throw Error(located(tmp, 0, "cannot create zip: " + zip_error_text(code)));
    // Each entry is two fragments, its header and the caller's array itself, never copied
    // (a copy of optimizer.npz was the peak of a training run's memory). libzip reads them
    // when the archive is closed: the headers stay alive until then.
    std::vector<std::string> headers;
    headers.reserve(arrays.size());
    for (const NpyArrayView& a : arrays) {
      headers.push_back(npy_header(a.shape, a.integers ? kInt64 : kFloat32));
      const auto [data, bytes] = npy_data(a);
      const zip_buffer_fragment_t fragments[2] = {{reinterpret_cast<zip_uint8_t*>(headers.back().data()), headers.back().size()},
                                                  {static_cast<zip_uint8_t*>(const_cast<void*>(data)), bytes}};
      zip_source_t* source = zip_source_buffer_fragment(archive, fragments, 2, 0);  // (an empty fragment is skipped)
      const zip_int64_t index =
          source ? zip_file_add(archive, (a.name + ".npy").c_str(), source, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) : -1;
      if (index < 0) {
        if (source) zip_source_free(source);
        const std::string why = zip_strerror(archive);
        zip_discard(archive);
        throw Error(located(tmp, 0, "cannot add " + a.name + ": " + why));
      }
      zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
      zip_file_set_mtime(archive, static_cast<zip_uint64_t>(index), kEntryTime, 0);
    }
    if (zip_close(archive) != 0) {
      const std::string why = zip_strerror(archive);
      zip_discard(archive);
      throw Error(located(tmp, 0, "cannot write zip: " + why));
    }
  });
}

std::map<std::string, NpyArray> load_npz(const std::string& path) {
  int code = 0;
  std::unique_ptr<zip_t, int (*)(zip_t*)> archive(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code),
                                                  zip_close);
  if (!archive) throw Error(located(path, 0, "cannot read as .npz (zip): " + zip_error_text(code)));
  std::map<std::string, NpyArray> arrays;
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t stat;
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(i), 0, &stat) != 0)
      throw Error(located(path, 0, std::string("corrupt entry: ") + zip_strerror(archive.get())));
    std::string name = stat.name;
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".npy") != 0) continue;
    name.resize(name.size() - 4);
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(
        zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(i), 0), zip_fclose);
    if (!file) throw Error(located(path, 0, "array '" + name + "' cannot be read: " + zip_strerror(archive.get())));
    const std::string what = path + ": array '" + name + "'";
    arrays[name] = decode_npy(read_entry(file.get(), stat.size, what), what);
  }
  return arrays;
}

}  // namespace rnnsearch

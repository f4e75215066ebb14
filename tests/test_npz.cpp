// .npz I/O: numpy's format (header layout, numpy itself can read it), round trips, and a
// clear refusal of truncated, corrupt or mistyped files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <chrono>
#include <fstream>
#include <thread>

#include <zip.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/io/npz.h"
#include "support/error_of.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

const std::vector<float> kMatrix = {1.5f, -2.f, 3.25f, 0.f, 1e-8f, -7.f};  // 2×3
const float kScalar = 42.f;
const std::int64_t kCount = (std::int64_t{1} << 40) + 1;  // not representable in float32

std::string save_example(const test::TempDir& dir) {
  const std::string path = dir.path("example.npz");
  save_npz(path, {{"matrix", {2, 3}, kMatrix.data()},
                  {"vector", {6}, kMatrix.data()},
                  {"scalar", {}, &kScalar},
                  {"count", {1}, nullptr, &kCount}});
  return path;
}

TEST(Npy, HeaderFollowsTheFormatSpecification) {
  const std::string bytes = encode_npy({2, 3}, kMatrix.data());
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  const size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u) << "data must start 64-byte aligned";
  EXPECT_EQ(bytes[10 + header_len - 1], '\n');
  EXPECT_NE(bytes.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(bytes.find("'shape': (2, 3)"), std::string::npos);
  EXPECT_NE(encode_npy({6}, kMatrix.data()).find("'shape': (6,)"), std::string::npos);
  EXPECT_EQ(bytes.size(), 10 + header_len + 6 * sizeof(float));
}

TEST(Npz, RoundTripKeepsNamesShapesAndValues) {
  test::TempDir dir;
  const auto arrays = load_npz(save_example(dir));
  ASSERT_EQ(arrays.size(), 4u);
  EXPECT_EQ(arrays.at("matrix").shape, (std::vector<long>{2, 3}));
  EXPECT_EQ(arrays.at("matrix").data, kMatrix);
  EXPECT_EQ(arrays.at("vector").shape, (std::vector<long>{6}));
  EXPECT_EQ(arrays.at("scalar").shape, (std::vector<long>{}));
  EXPECT_EQ(arrays.at("scalar").data, std::vector<float>{kScalar});
  EXPECT_FALSE(arrays.at("matrix").is_integer);
  EXPECT_TRUE(arrays.at("count").is_integer);
  EXPECT_TRUE(arrays.at("count").data.empty());
  EXPECT_EQ(arrays.at("count").integers, std::vector<std::int64_t>{kCount});
}

TEST(Npz, NumpyLoadsIt) {
  if (std::system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") != 0) GTEST_SKIP() << "numpy not installed";
  test::TempDir dir;
  const std::string path = save_example(dir);
  const std::string script = dir.write(
      "check.py",
      "import sys, numpy as np\n"
      "z = np.load(sys.argv[1])\n"
      "assert sorted(z.files) == ['count', 'matrix', 'scalar', 'vector'], z.files\n"
      "assert z['count'].dtype == np.int64 and z['count'][0] == 2**40 + 1\n"
      "m = z['matrix']\n"
      "assert m.dtype == np.float32 and m.shape == (2, 3) and m.flags.c_contiguous\n"
      "assert m[0, 2] == 3.25 and m[1, 2] == -7 and z['vector'].shape == (6,) and z['scalar'] == 42\n");
  EXPECT_EQ(std::system(("/usr/bin/python3 " + script + " " + path).c_str()), 0);
}

TEST(Npz, EqualArraysGiveByteIdenticalFiles) {
  test::TempDir dir;
  const std::string first = read_file(save_example(dir));
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // the zip clock ticks in 2 s
  EXPECT_TRUE(read_file(save_example(dir)) == first);
}

TEST(Npz, TruncatedFileIsRefusedNamingIt) {
  test::TempDir dir;
  const std::string bytes = read_file(save_example(dir));
  for (size_t keep : {bytes.size() / 2, bytes.size() - 10, size_t{0}}) {
    const std::string path = dir.write("cut.npz", bytes.substr(0, keep));
    EXPECT_NE(test::error_of([&] { load_npz(path); }).find(path), std::string::npos) << "kept " << keep;
  }
}

TEST(Npz, CorruptDataIsRefused) {
  test::TempDir dir;
  std::string bytes = read_file(save_example(dir));
  // Flip a byte inside the first array's data: the zip CRC no longer matches.
  const size_t npy = bytes.find("\x93NUMPY");
  const size_t header_len = static_cast<unsigned char>(bytes[npy + 8]) | (static_cast<unsigned char>(bytes[npy + 9]) << 8);
  const size_t data = npy + 10 + header_len + 4;
  bytes[data] = static_cast<char>(bytes[data] ^ 0x5a);
  const std::string path = dir.write("corrupt.npz", bytes);
  EXPECT_NE(test::error_of([&] { load_npz(path); }).find(path), std::string::npos);
}

TEST(Npz, MissingFileAndWrongDtypeAreRefused) {
  test::TempDir dir;
  EXPECT_NE(test::error_of([&] { load_npz(dir.path("absent.npz")); }).find("absent.npz"), std::string::npos);
  std::string npy = encode_npy({6}, kMatrix.data());
  npy.replace(npy.find("<f4"), 3, "<f8");
  EXPECT_NE(test::error_of([&] { decode_npy(npy, "x.npy"); }).find("float32"), std::string::npos);
  // A declared shape of 7 floats whose data is cut short (kMatrix holds 6, so the shape
  // claims one less than it is encoded from: 6 values, 7 declared, header intact).
  std::string truncated = encode_npy({6}, kMatrix.data());
  truncated.replace(truncated.find("(6,)"), 4, "(7,)");
  EXPECT_NE(test::error_of([&] { decode_npy(truncated, "x.npy"); }).find("truncated"), std::string::npos);
  // A corrupt header with absurd dimensions is refused, not allocated or overflowed.
  std::string huge = encode_npy({6}, kMatrix.data());
  huge.replace(huge.find("(6,)"), 4, "(99999999999999999999,)");
  EXPECT_NE(test::error_of([&] { decode_npy(huge, "x.npy"); }).find("x.npy"), std::string::npos);
  huge = encode_npy({2, 3}, kMatrix.data());
  huge.replace(huge.find("(2, 3)"), 6, "(4294967296, 4294967296)");
  EXPECT_NE(test::error_of([&] { decode_npy(huge, "x.npy"); }).find("does not fit"), std::string::npos);
}

// A compressed zip entry whose size field claims 3.75 GB for a few bytes of data: the
// loader must refuse it without ever holding that much memory (here: under a 1 GB
// address-space limit; the loader before this test allocated the claimed size).
TEST(Npz, ClaimedEntrySizeIsNotTrusted) {
  if (test::kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit";
  test::TempDir dir;
  const std::string path = dir.path("claims.npz");
  const std::string npy = encode_npy({6}, kMatrix.data());
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, nullptr);
  ASSERT_NE(archive, nullptr);
  zip_source_t* source = zip_source_buffer(archive, npy.data(), npy.size(), 0);
  const zip_int64_t index = zip_file_add(archive, "vector.npy", source, 0);
  ASSERT_GE(index, 0);
  zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_DEFLATE, 0);
  ASSERT_EQ(zip_close(archive), 0);
  std::string bytes = read_file(path);
  auto claim = [&](size_t at) {  // a little-endian uint32 size field
    for (int k = 0; k < 4; ++k) bytes[at + k] = static_cast<char>((0xF0000000u >> (8 * k)) & 0xff);
  };
  claim(bytes.find("PK\x03\x04") + 22);  // the local header's uncompressed size
  claim(bytes.find("PK\x01\x02") + 24);  // the central directory's
  dir.write("claims.npz", bytes);
  const pid_t child = fork();
  if (child == 0) {
    const rlimit limit{rlim_t{1} << 30, rlim_t{1} << 30};
    setrlimit(RLIMIT_AS, &limit);
    try {
      load_npz(path);
      _exit(1);
    } catch (const std::bad_alloc&) {
      _exit(2);
    } catch (const Error& e) {
      _exit(std::string(e.what()).find(path) != std::string::npos ? 0 : 3);
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: loaded, 2: out of memory, 3: error without the file name";
}

TEST(Npz, SaveIsAtomic) {
  test::TempDir dir;
  const std::string path = save_example(dir);
  const std::string before = read_file(path);
  // A write that fails half-way (here: an unwritable location for the temporary file)
  // must leave the existing file untouched.
  EXPECT_THROW(save_npz(dir.path("no/such/dir/x.npz"), {{"a", {1}, &kScalar}}), Error);
  EXPECT_EQ(read_file(path), before);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path("")), {}), 1) << "no temporary left behind";
}

}  // namespace
}  // namespace rnnsearch

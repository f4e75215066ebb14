#include "rnnsearch/text/corpus_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <nlohmann/json.hpp>
#include <vector>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"

namespace rnnsearch {
namespace {

constexpr char kMagic[8] = {'R', 'N', 'N', 'S', 'C', 'O', 'R', 'P'};
constexpr int kFormat = 1;
constexpr char kZeros[8] = {};

size_t padded(size_t bytes) { return (bytes + 7) / 8 * 8; }

// CRC-32 continued over `bytes` bytes (zlib's crc32 takes a null buffer as "start over").
uLong crc_of(uLong crc, const void* data, size_t bytes) {
  return bytes == 0 ? crc : crc32_z(crc, static_cast<const Bytef*>(data), bytes);
}

uLong crc_start() { return crc32(0L, Z_NULL, 0); }

}  // namespace

// One side as it is written: its ids appended to a scratch file (and their CRC-32 kept
// up to date), its sentence starts in memory.
struct CorpusCacheWriter::Side {
  explicit Side(std::string scratch_path)
      : path(std::move(scratch_path)), scratch(path, std::ios::binary | std::ios::trunc) {
    if (!scratch) throw Error(located(path, 0, std::string("cannot create: ") + std::strerror(errno)));
  }
  ~Side() { std::remove(path.c_str()); }

  void add(const CorpusSide& chunk) {
    if (chunks++ == 0) narrow = chunk.narrow();
    if (chunk.narrow() != narrow) throw std::invalid_argument("CorpusCacheWriter: chunks of different id widths");
    const uint64_t base = starts.back();
    for (size_t k = 1; k <= chunk.size(); ++k) starts.push_back(base + chunk.starts()[k]);
    const size_t bytes = chunk.starts()[chunk.size()] * (narrow ? 2 : 4);
    scratch.write(static_cast<const char*>(chunk.ids()), static_cast<std::streamsize>(bytes));
    ids_crc = crc_of(ids_crc, chunk.ids(), bytes);
  }
  uint64_t ids() const { return starts.back(); }
  size_t id_bytes() const { return ids() * (narrow ? 2 : 4); }

  std::string path;
  std::ofstream scratch;
  std::vector<uint64_t> starts = {0};  // sentence k is ids starts[k] … starts[k + 1] − 1
  bool narrow = true;
  size_t chunks = 0;
  uLong ids_crc = crc_start();
};

namespace {

// Copies the whole file at `from` to `out`; throws rnnsearch::Error naming it when it fails.
void copy_file_to(const std::string& from, std::ostream& out) {
  std::ifstream in(from, std::ios::binary);
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    out.write(buffer.data(), in.gcount());
  }
  if (!in.eof()) throw Error(located(from, 0, std::string("cannot read: ") + std::strerror(errno)));
}

// A memory-mapped file, unmapped when the last CorpusSide viewing it is gone.
struct Mapping {
  std::shared_ptr<const void> owner;
  const char* bytes = nullptr;
  size_t size = 0;
};

// Maps `path` read-only; on failure returns an empty Mapping and sets `problem`.
Mapping map_file(const std::string& path, std::string& problem) {
  Mapping mapping;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    problem = errno == ENOENT ? "not written yet" : std::string("cannot open: ") + std::strerror(errno);
    return mapping;
  }
  struct stat st {};
  void* base = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && st.st_size > 0)
    base = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) {
    problem = st.st_size == 0 ? "damaged: empty" : std::string("cannot map: ") + std::strerror(errno);
    return mapping;
  }
  mapping.size = static_cast<size_t>(st.st_size);
  mapping.bytes = static_cast<const char*>(base);
  mapping.owner = std::shared_ptr<const void>(base, [size = mapping.size](const void* p) {
    ::munmap(const_cast<void*>(p), size);
  });
  return mapping;
}

// The JSON header of a mapped file, or null (and `problem`) when it cannot be read.
nlohmann::json read_header(const Mapping& file, std::string& problem) {
  uint64_t length = 0;
  if (file.size < 16 || std::memcmp(file.bytes, kMagic, sizeof kMagic) != 0) {
    problem = "damaged: not a corpus cache";
    return nullptr;
  }
  std::memcpy(&length, file.bytes + 8, 8);
  if (length > file.size - 16) {
    problem = "damaged: its header is cut short";
    return nullptr;
  }
  nlohmann::json header = nlohmann::json::parse(file.bytes + 16, file.bytes + 16 + length, nullptr, false);
  if (!header.is_object()) problem = "damaged: its header is not JSON";
  return header.is_object() ? header : nullptr;
}

// Do the starts begin at 0, never decrease, and end at the number of ids?
bool starts_are_sound(const uint64_t* starts, size_t sentences, uint64_t ids) {
  if (starts[0] != 0 || starts[sentences] != ids) return false;
  for (size_t k = 0; k < sentences; ++k)
    if (starts[k] > starts[k + 1]) return false;
  return true;
}

// Are the `count` ids at `ids` (uint16 when narrow, else uint32) all below `limit`?
bool ids_below(const char* ids, uint64_t count, bool narrow, size_t limit) {
  uint32_t largest = 0;
  if (narrow) {
    const auto* p = reinterpret_cast<const uint16_t*>(ids);
    for (uint64_t i = 0; i < count; ++i) largest = std::max<uint32_t>(largest, p[i]);
  } else {
    const auto* p = reinterpret_cast<const uint32_t*>(ids);
    for (uint64_t i = 0; i < count; ++i) largest = std::max(largest, p[i]);
  }
  return count == 0 || largest < limit;
}

// Is every link of the view (pairs of positions) inside its pair's sentences?
bool links_inside(const CorpusSide& links, const CorpusSide& src, const CorpusSide& tgt) {
  for (size_t k = 0; k < links.size(); ++k) {
    const SentenceIds pair = links[k];
    if (pair.size() % 2 != 0) return false;
    for (size_t l = 0; l < pair.size(); l += 2)
      if (static_cast<size_t>(pair[l]) >= src.length(k) || static_cast<size_t>(pair[l + 1]) >= tgt.length(k))
        return false;
  }
  return true;
}

// The corpus viewed in a mapped file whose header matched; nothing (and `problem`) when the
// file's size, checksum, starts or links disagree with the header.
std::optional<ParallelCorpus> view_corpus(const Mapping& file, const nlohmann::json& header, size_t src_vocab_size,
                                          size_t tgt_vocab_size, std::string& problem) {
  uint64_t length = 0;
  std::memcpy(&length, file.bytes + 8, 8);
  const size_t sentences = header.at("sentences").get<size_t>();
  // the sides in file order: source, target, and guided alignment's links when there are
  struct SideInfo {
    uint64_t ids;
    bool narrow;
    size_t limit;  // every id below it
  };
  std::vector<SideInfo> sides;
  for (const char* name : {"src", "tgt", "links"}) {
    if (name[0] == 'l' && !header.contains(name)) continue;  // (a missing src or tgt throws)
    const size_t limit = sides.empty() ? src_vocab_size : sides.size() == 1 ? tgt_vocab_size : SIZE_MAX;
    sides.push_back({header.at(name).at("ids").get<uint64_t>(), header.at(name).at("narrow").get<bool>(), limit});
  }
  // (counts beyond the file's size would overflow the sums below)
  bool counts_fit = sentences < file.size / 8;
  const size_t starts_bytes = padded((sentences + 1) * 8);
  size_t expected = padded(16 + length);
  const size_t payload = expected;
  for (const SideInfo& side : sides) {
    counts_fit = counts_fit && side.ids < file.size;
    expected += starts_bytes + padded(side.ids * (side.narrow ? 2 : 4));
  }
  if (!counts_fit || file.size != expected) {
    problem = "damaged: its size is not what its header says";
    return std::nullopt;
  }
  const uint32_t crc = static_cast<uint32_t>(crc_of(crc_start(), file.bytes + payload, file.size - payload));
  if (crc != header.at("payload_crc32").get<uint32_t>()) {
    problem = "damaged: its checksum does not match";
    return std::nullopt;
  }
  std::vector<CorpusSide> views;
  const char* ids = file.bytes + payload + sides.size() * starts_bytes;
  for (size_t k = 0; k < sides.size(); ++k) {
    const auto* starts = reinterpret_cast<const uint64_t*>(file.bytes + payload + k * starts_bytes);
    if (!starts_are_sound(starts, sentences, sides[k].ids)) {
      problem = "damaged: its sentence starts are out of order";
      return std::nullopt;
    }
    if (!ids_below(ids, sides[k].ids, sides[k].narrow, sides[k].limit)) {
      problem = "damaged: an id is outside the vocabulary";
      return std::nullopt;
    }
    views.push_back(CorpusSide::view(starts, sentences, ids, sides[k].narrow, file.owner));
    ids += padded(sides[k].ids * (sides[k].narrow ? 2 : 4));
  }
  ParallelCorpus corpus{views[0], views[1], header.at("lines_read").get<size_t>(),
                        header.at("skipped_empty").get<size_t>(), header.at("skipped_too_long").get<size_t>()};
  if (views.size() == 3) {
    if (!links_inside(views[2], corpus.src, corpus.tgt)) {
      problem = "damaged: a link is outside its sentence pair";
      return std::nullopt;
    }
    corpus.links = views[2];
  }
  return corpus;
}

}  // namespace

CorpusCacheWriter::CorpusCacheWriter(std::string path, std::string key, bool links)
    : path_(std::move(path)), key_(std::move(key)) {
  const std::string scratch = path_ + ".tmp." + std::to_string(::getpid());
  src_ = std::make_unique<Side>(scratch + ".src");
  tgt_ = std::make_unique<Side>(scratch + ".tgt");
  if (links) links_ = std::make_unique<Side>(scratch + ".links");
}

CorpusCacheWriter::~CorpusCacheWriter() = default;

void CorpusCacheWriter::add(const ParallelCorpus& chunk) {
  src_->add(chunk.src);
  tgt_->add(chunk.tgt);
  if (links_) links_->add(chunk.links);
  lines_read_ += chunk.lines_read;
  skipped_empty_ += chunk.skipped_empty;
  skipped_too_long_ += chunk.skipped_too_long;
}

std::vector<CorpusCacheWriter::Side*> CorpusCacheWriter::sides() const {
  std::vector<Side*> all = {src_.get(), tgt_.get()};
  if (links_) all.push_back(links_.get());
  return all;
}

void CorpusCacheWriter::finish() {
  for (Side* side : sides()) {
    side->scratch.close();
    if (!side->scratch) throw Error(located(side->path, 0, std::string("cannot write: ") + std::strerror(errno)));
  }
  // The payload's CRC-32 in file order: the sides' starts arrays, then each side's ids and
  // padding (the ids' CRCs were taken as they were written; crc32_combine appends one to another).
  const size_t starts_bytes = src_->starts.size() * 8;
  uLong crc = crc_of(crc_start(), src_->starts.data(), starts_bytes);
  for (Side* side : sides())
    if (side != src_.get())
      crc = crc32_combine(crc, crc_of(crc_start(), side->starts.data(), starts_bytes), static_cast<z_off_t>(starts_bytes));
  for (Side* side : sides()) {
    const size_t bytes = side->id_bytes(), pad = padded(bytes) - bytes;
    crc = crc32_combine(crc, crc_of(side->ids_crc, kZeros, pad), static_cast<z_off_t>(bytes + pad));
  }
  auto side_json = [](const Side& s) { return nlohmann::json{{"ids", s.ids()}, {"narrow", s.narrow}}; };
  nlohmann::json fields = {{"format", kFormat},
                           {"key", key_},
                           {"sentences", src_->starts.size() - 1},
                           {"src", side_json(*src_)},
                           {"tgt", side_json(*tgt_)},
                           {"lines_read", lines_read_},
                           {"skipped_empty", skipped_empty_},
                           {"skipped_too_long", skipped_too_long_},
                           {"payload_crc32", static_cast<uint32_t>(crc)}};
  if (links_) fields["links"] = side_json(*links_);
  const std::string header = fields.dump();
  const uint64_t length = header.size();
  write_atomically(path_, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw Error(located(tmp, 0, std::string("cannot create: ") + std::strerror(errno)));
    out.write(kMagic, sizeof kMagic);
    out.write(reinterpret_cast<const char*>(&length), 8);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(kZeros, static_cast<std::streamsize>(padded(16 + length) - 16 - length));
    for (const Side* side : sides())
      out.write(reinterpret_cast<const char*>(side->starts.data()), static_cast<std::streamsize>(starts_bytes));
    for (const Side* side : sides()) {
      copy_file_to(side->path, out);
      out.write(kZeros, static_cast<std::streamsize>(padded(side->id_bytes()) - side->id_bytes()));
    }
    out.flush();
    if (!out) throw Error(located(tmp, 0, std::string("cannot write: ") + std::strerror(errno)));
  });
}

void write_corpus_cache(const std::string& path, const ParallelCorpus& corpus, const std::string& key) {
  CorpusCacheWriter writer(path, key, corpus.has_links());
  writer.add(corpus);
  writer.finish();
}

std::optional<ParallelCorpus> map_corpus_cache(const std::string& path, const std::string& key, size_t src_vocab_size,
                                              size_t tgt_vocab_size, std::string& problem) {
  const Mapping file = map_file(path, problem);
  if (!file.bytes) return std::nullopt;
  const nlohmann::json header = read_header(file, problem);
  if (header.is_null()) return std::nullopt;
  try {
    if (header.at("format").get<int>() != kFormat) {
      problem = "written in another format";
      return std::nullopt;
    }
    if (header.at("key").get<std::string>() != key) {
      problem = "made from other data (the training text, vocabularies, tokenizer or --max-length changed)";
      return std::nullopt;
    }
    return view_corpus(file, header, src_vocab_size, tgt_vocab_size, problem);
  } catch (const nlohmann::json::exception&) {
    problem = "damaged: its header lacks a field";
    return std::nullopt;
  }
}

}  // namespace rnnsearch

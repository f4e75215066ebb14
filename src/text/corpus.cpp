#include "rnnsearch/text/corpus.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <optional>

#include "rnnsearch/error.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/text/word_links.h"

namespace rnnsearch {
namespace {

// Lines per chunk: enough to keep every thread busy between two sequential reads, few
// enough that a chunk's text and ids are a few megabytes.
constexpr size_t kChunkLines = size_t{1} << 14;

// One file still had line `line` when the other had ended.
Error length_mismatch(const std::string& src_path, const std::string& tgt_path, bool src_longer,
                      size_t line) {
  const std::string& longer = src_longer ? src_path : tgt_path;
  const std::string& shorter = src_longer ? tgt_path : src_path;
  return Error(src_path + " and " + tgt_path + " differ in length: " + longer +
               " has more lines than " + shorter + " (line " + std::to_string(line) + ")");
}

// The piece links of one pair (word_links.h): its line of the links file, the pair's
// tokens and pieces. Throws rnnsearch::Error "LINKS:LINE: problem".
std::vector<int> pair_piece_links(const std::string& links_line, const std::vector<std::string>& src_pieces,
                                  size_t src_words, bool src_identity, const std::vector<std::string>& tgt_pieces,
                                  size_t tgt_words, bool tgt_identity) {
  std::vector<int> src_word_of_piece, tgt_word_of_piece;
  const size_t src_joined = join_pieces(src_pieces, src_identity, &src_word_of_piece).size();
  const size_t tgt_joined = join_pieces(tgt_pieces, tgt_identity, &tgt_word_of_piece).size();
  if (src_joined != src_words || tgt_joined != tgt_words)
    throw Error("the pair's subword pieces join into other words than its tokens");
  return piece_links(parse_pharaoh_line(links_line), src_word_of_piece, static_cast<int>(src_words), tgt_word_of_piece,
                     static_cast<int>(tgt_words));
}

// Calls body(i, thread) for every i in [0, n) on `threads` threads (thread: 0 … threads − 1);
// when some throw, rethrows the exception of the lowest i, as a sequential loop would.
template <typename Body>
void for_each_line(size_t n, int threads, const Body& body) {
  std::exception_ptr error;
  size_t error_at = SIZE_MAX;
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads) if (threads > 1)
  for (size_t i = 0; i < n; ++i) {
    try {
      body(i, omp_get_thread_num());
    } catch (...) {
#pragma omp critical(rnnsearch_corpus_error)
      if (i < error_at) {
        error_at = i;
        error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

// One PieceCache per thread (a cache is not thread-safe).
std::vector<PieceCache> piece_caches(const Subwords& subwords, int threads) {
  std::vector<PieceCache> caches;
  caches.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) caches.emplace_back(subwords);
  return caches;
}

// What a line of a chunk became.
enum class Kept : uint8_t { yes, empty, too_long };

}  // namespace

CorpusSide link_side(size_t max_length) {
  return max_length == 0 ? CorpusSide() : CorpusSide(max_length);  // positions < max_length
}

void ParallelCorpus::append(const ParallelCorpus& more) {
  src.append(more.src);
  tgt.append(more.tgt);
  links.append(more.links);
  lines_read += more.lines_read;
  skipped_empty += more.skipped_empty;
  skipped_too_long += more.skipped_too_long;
}

void stream_parallel_corpus(const std::string& src_path, const std::string& tgt_path, const Subwords& src_subwords,
                            const Subwords& tgt_subwords, const Vocab& src_vocab, const Vocab& tgt_vocab,
                            const TokenizerOptions& tokenizer, size_t max_length, int threads,
                            const std::function<void(const ParallelCorpus& chunk)>& sink,
                            const std::string& links_path) {
  threads = std::max(threads, 1);
  LineReader src_reader(src_path), tgt_reader(tgt_path);
  std::optional<LineReader> links_reader;
  if (!links_path.empty()) links_reader.emplace(links_path);
  std::vector<PieceCache> src_pieces = piece_caches(src_subwords, threads);
  std::vector<PieceCache> tgt_pieces = piece_caches(tgt_subwords, threads);
  // The chunk's lines, their ids and their fate; reused from chunk to chunk, grown to the
  // longest chunk's lines only (a file of a few lines does not pay for kChunkLines).
  std::vector<std::string> src_lines, tgt_lines, links_lines;
  std::vector<std::vector<int>> src_ids, tgt_ids, links;
  std::vector<Kept> kept;
  size_t lines_read = 0;
  for (bool more = true; more;) {
    size_t n = 0;
    for (; n < kChunkLines; ++n) {
      if (n == src_lines.size()) {
        src_lines.emplace_back();
        tgt_lines.emplace_back();
        links_lines.emplace_back();
      }
      const bool has_src = next_valid_line(src_reader, src_lines[n]);
      const bool has_tgt = next_valid_line(tgt_reader, tgt_lines[n]);
      if (has_src != has_tgt) throw length_mismatch(src_path, tgt_path, has_src, lines_read + n + 1);
      if (links_reader) {
        const bool has_links = links_reader->next(links_lines[n]);
        if (has_links != has_src) throw length_mismatch(src_path, links_path, has_src, lines_read + n + 1);
      }
      if (!has_src) break;
    }
    more = n == kChunkLines;
    lines_read += n;
    if (kept.size() < n) {
      src_ids.resize(n);
      tgt_ids.resize(n);
      links.resize(n);
      kept.resize(n);
    }

    for_each_line(n, threads, [&](size_t i, int thread) {
      const auto src_words = tokenize(src_lines[i], tokenizer), tgt_words = tokenize(tgt_lines[i], tokenizer);
      const auto src_tokens = src_pieces[static_cast<size_t>(thread)].encode(src_words);
      const auto tgt_tokens = tgt_pieces[static_cast<size_t>(thread)].encode(tgt_words);
      if (src_tokens.empty() || tgt_tokens.empty()) {
        kept[i] = Kept::empty;
      } else if (max_length != 0 && (src_tokens.size() > max_length || tgt_tokens.size() > max_length)) {
        kept[i] = Kept::too_long;
      } else {
        kept[i] = Kept::yes;
        src_ids[i] = src_vocab.encode(src_tokens);
        tgt_ids[i] = tgt_vocab.encode(tgt_tokens);
        if (links_reader) try {
            links[i] = pair_piece_links(links_lines[i], src_tokens, src_words.size(), src_subwords.identity(), tgt_tokens,
                                        tgt_words.size(), tgt_subwords.identity());
          } catch (const Error& e) {
            throw Error(located(links_path, lines_read - n + i + 1, e.what()));
          }
      }
    });

    ParallelCorpus chunk{CorpusSide(src_vocab.size()), CorpusSide(tgt_vocab.size())};
    if (links_reader) chunk.links = link_side(max_length);
    chunk.lines_read = n;
    for (size_t i = 0; i < n; ++i) {
      if (kept[i] == Kept::empty) ++chunk.skipped_empty;
      if (kept[i] == Kept::too_long) ++chunk.skipped_too_long;
      if (kept[i] != Kept::yes) continue;
      chunk.src.push_back(src_ids[i]);
      chunk.tgt.push_back(tgt_ids[i]);
      if (links_reader) chunk.links.push_back(links[i]);
    }
    if (n > 0) sink(chunk);
  }
}

ParallelCorpus read_parallel_corpus(const std::string& src_path, const std::string& tgt_path,
                                    const Subwords& src_subwords, const Subwords& tgt_subwords,
                                    const Vocab& src_vocab, const Vocab& tgt_vocab,
                                    const TokenizerOptions& tokenizer, size_t max_length, int threads,
                                    const std::string& links_path) {
  ParallelCorpus corpus{CorpusSide(src_vocab.size()), CorpusSide(tgt_vocab.size())};
  if (!links_path.empty()) corpus.links = link_side(max_length);
  stream_parallel_corpus(
      src_path, tgt_path, src_subwords, tgt_subwords, src_vocab, tgt_vocab, tokenizer, max_length, threads,
      [&](const ParallelCorpus& chunk) { corpus.append(chunk); }, links_path);
  return corpus;
}

size_t count_tokens(const std::string& path, const TokenizerOptions& tokenizer, const Subwords& subwords,
                    TokenCounts& counts, int threads) {
  threads = std::max(threads, 1);
  LineReader reader(path);
  std::vector<PieceCache> pieces = piece_caches(subwords, threads);
  std::vector<TokenCounts> thread_counts(static_cast<size_t>(threads));  // added into counts at the end
  std::vector<std::string> lines;  // grown as in stream_parallel_corpus
  for (bool more = true; more;) {
    size_t n = 0;
    for (; n < kChunkLines; ++n) {
      if (n == lines.size()) lines.emplace_back();
      if (!next_valid_line(reader, lines[n])) break;
    }
    more = n == kChunkLines;
    for_each_line(n, threads, [&](size_t i, int thread) {
      TokenCounts& mine = thread_counts[static_cast<size_t>(thread)];
      for (const std::string& token : pieces[static_cast<size_t>(thread)].encode(tokenize(lines[i], tokenizer)))
        ++mine[token];
    });
  }
  for (const TokenCounts& mine : thread_counts)
    for (const auto& [token, count] : mine) counts[token] += count;
  return reader.line_number();
}

}  // namespace rnnsearch

#include "rnnsearch/text/corpus.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/text/corpus_cache.h"
#include "rnnsearch/text/line_reader.h"
#include "support/error_of.h"
#include "support/temp_dir.h"
#include "support/tokenized_text.h"

namespace rnnsearch {
namespace {

using Lines = std::vector<std::string>;

// Writes `content` gzip-compressed to `path`.
void write_gzip(const std::string& path, const std::string& content) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, content.data(), static_cast<unsigned>(content.size())),
            static_cast<int>(content.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

class Corpus : public ::testing::Test {
 protected:
  ParallelCorpus read(const std::string& src, const std::string& tgt, size_t max_length = 0) {
    return read_parallel_corpus(src, tgt, Subwords{}, Subwords{}, src_vocab, tgt_vocab, {}, max_length);
  }
  // The word counts of one file, as a vocabulary is built from them.
  TokenCounts count(const std::string& path) {
    TokenCounts counts;
    count_tokens(path, {}, Subwords{}, counts);
    return counts;
  }

  test::TempDir dir;
  Vocab src_vocab = Vocab::build({{"a", "dog", "runs", ".", "a", "dog", "runs", "."}}, 2);
  Vocab tgt_vocab = Vocab::build({{"ein", "hund", "läuft", ".", "ein", "hund", "läuft", "."}}, 2);
};

// Sentences of random ids read back as they went in, from 16-bit storage (ids up to 65,535)
// and 32-bit storage (above); ids outside the vocabulary are refused.
TEST(CorpusSide, HoldsSentencesFlat) {
  std::mt19937 random(3);
  for (size_t vocab_size : {size_t{65536}, size_t{70000}}) {
    CorpusSide side(vocab_size), any;
    std::vector<std::vector<int>> sentences;
    for (int k = 0; k < 200; ++k) {
      std::vector<int> ids(1 + random() % 30);
      for (int& id : ids) id = static_cast<int>(random() % vocab_size);
      ids.back() = static_cast<int>(vocab_size) - 1;  // the largest id the side holds
      sentences.push_back(ids);
      side.push_back(ids);
      any.push_back(ids);
    }
    ASSERT_EQ(side.size(), sentences.size());
    for (size_t k = 0; k < sentences.size(); ++k) {
      EXPECT_EQ(side[k].to_vector(), sentences[k]) << vocab_size;
      EXPECT_EQ(side.length(k), sentences[k].size());
    }
    EXPECT_EQ(side, any);  // equal content, whatever the width
    any.push_back({4});
    EXPECT_FALSE(side == any);
    EXPECT_THROW(side.push_back({4, static_cast<int>(vocab_size)}), std::invalid_argument);
    EXPECT_THROW(side.push_back({-1}), std::invalid_argument);
    EXPECT_EQ(side.size(), sentences.size()) << "a refused sentence is not added";
  }
}

TEST_F(Corpus, ReadsAndEncodesPairs) {
  ParallelCorpus corpus = read(dir.write("s", "A dog runs.\nA cat runs.\n"),
                               dir.write("t", "Ein Hund läuft.\nEine Katze läuft.\n"));
  ASSERT_EQ(corpus.size(), 2u);
  EXPECT_EQ(corpus.lines_read, 2u);
  EXPECT_EQ(corpus.src[0].to_vector(), src_vocab.encode({"a", "dog", "runs", "."}));
  EXPECT_EQ(corpus.tgt[0].to_vector(), tgt_vocab.encode({"ein", "hund", "läuft", "."}));
  EXPECT_EQ(corpus.src[1][1], Vocab::kUnk);
  EXPECT_EQ(corpus.tgt[1].to_vector().back(), Vocab::kEos);
  EXPECT_EQ(src_vocab.decode(corpus.src[1].to_vector()), (Lines{"a", "<unk>", "runs", "."}));
}

TEST_F(Corpus, LineCountMismatchNamesBothFilesAndTheLine) {
  const std::string three = dir.write("three", "a\nb\nc\n");
  const std::string two = dir.write("two", "a\nb\n");
  EXPECT_EQ(test::error_of([&] { read(three, two); }),
            three + " and " + two + " differ in length: " + three + " has more lines than " + two +
                " (line 3)");
  EXPECT_EQ(test::error_of([&] { read(two, three); }),
            two + " and " + three + " differ in length: " + three + " has more lines than " + two +
                " (line 3)");
}

TEST_F(Corpus, InvalidUtf8NamesFileAndLine) {
  const std::string good = dir.write("good", "a\nb\nc\n");
  const std::string latin1 = dir.write("latin1", "a\nStra\xDF" "e\nc\n");
  EXPECT_EQ(test::error_of([&] { read(good, latin1); }), latin1 + ":2: invalid UTF-8");
  EXPECT_EQ(test::error_of([&] { read(latin1, good); }), latin1 + ":2: invalid UTF-8");
  EXPECT_EQ(test::error_of([&] { count(latin1); }), latin1 + ":2: invalid UTF-8");
  EXPECT_EQ(test::error_of([&] { read_lines(latin1); }), latin1 + ":2: invalid UTF-8");
}

TEST_F(Corpus, MissingFileIsNamed) {
  const std::string good = dir.write("good", "a\n");
  const std::string missing = dir.path("no-such-file.en");
  EXPECT_EQ(test::error_of([&] { read(good, missing); }), missing + ": cannot open: No such file or directory");
  EXPECT_EQ(test::error_of([&] { count(missing); }), missing + ": cannot open: No such file or directory");
  EXPECT_EQ(test::error_of([&] { count(dir.path("")); }).find(dir.path("") + ": cannot open"), 0u);
}

TEST_F(Corpus, EmptyAndLongPairsAreSkippedAndCounted) {
  const std::string src = dir.write("s",
                                    "a dog\n"          // kept
                                    "\n"               // empty source
                                    "a dog runs\n"     // 3 tokens: kept at max_length 3
                                    "a dog\n"          // empty target (only spaces)
                                    "a dog runs .\n"   // 4 tokens: too long
                                    "a\n");            // target too long
  const std::string tgt = dir.write("t", "ein hund\nein hund\nein hund läuft\n  \t\nein hund\na b c d e\n");
  ParallelCorpus corpus = read(src, tgt, 3);
  EXPECT_EQ(corpus.lines_read, 6u);
  EXPECT_EQ(corpus.skipped_empty, 2u);
  EXPECT_EQ(corpus.skipped_too_long, 2u);
  ASSERT_EQ(corpus.size(), 2u);
  EXPECT_EQ(corpus.src[1].size(), 4u);  // 3 tokens + </s>: </s> does not count toward the limit

  // 0 = no limit: only the empty pairs go.
  ParallelCorpus unlimited = read(src, tgt, 0);
  EXPECT_EQ(unlimited.skipped_empty, 2u);
  EXPECT_EQ(unlimited.skipped_too_long, 0u);
  EXPECT_EQ(unlimited.size(), 4u);
}

TEST_F(Corpus, GzipAndPlainFilesReadTheSame) {
  const std::string src_text = "A dog runs.\nÜber 3 Hunde\n\nlast line without newline";
  const std::string tgt_text = "Ein Hund läuft.\nx\ny\nz\n";
  const std::string src_gz = dir.path("s.gz"), tgt_gz = dir.path("t.gz");
  write_gzip(src_gz, src_text);
  write_gzip(tgt_gz, tgt_text);
  const std::string src_plain = dir.write("s", src_text), tgt_plain = dir.write("t", tgt_text);

  EXPECT_EQ(read_lines(src_gz), (Lines{"A dog runs.", "Über 3 Hunde", "", "last line without newline"}));
  EXPECT_EQ(read_lines(src_gz), read_lines(src_plain));
  ParallelCorpus gz = read(src_gz, tgt_gz), plain = read(src_plain, tgt_plain);
  EXPECT_EQ(gz.src, plain.src);
  EXPECT_EQ(gz.tgt, plain.tgt);
  EXPECT_EQ(gz.skipped_empty, 1u);
  EXPECT_EQ(count(src_gz), count(src_plain));
  TokenCounts counts;
  EXPECT_EQ(count_tokens(src_gz, {}, Subwords{}, counts), 4u);  // lines, the last one without \n
}

TEST_F(Corpus, TruncatedGzipIsAnError) {
  const std::string whole = dir.path("whole.gz");
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "line " + std::to_string(i) + " of a long file\n";
  write_gzip(whole, text);
  ASSERT_EQ(read_lines(whole).size(), 2000u);
  std::ifstream in(whole, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  const std::string cut = dir.write("cut.gz", bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(test::error_of([&] { read_lines(cut); }).find(cut + ":"), std::string::npos);
}

TEST_F(Corpus, CrLfLineEndingsAreStripped) {
  const std::string crlf = dir.write("crlf", "A dog\r\nruns\r\n\r\nend");
  EXPECT_EQ(read_lines(crlf), (Lines{"A dog", "runs", "", "end"}));
  LineReader reader(crlf);
  std::string line;
  ASSERT_TRUE(reader.next(line));
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(reader.line_number(), 2u);
  EXPECT_EQ(reader.path(), crlf);

  ParallelCorpus corpus = read(crlf, dir.write("lf", "Ein Hund\nläuft\n\nende\n"));
  EXPECT_EQ(corpus.lines_read, 4u);
  EXPECT_EQ(corpus.skipped_empty, 1u);
  EXPECT_EQ(corpus.src[0].to_vector(), src_vocab.encode({"a", "dog"}));
}

TEST_F(Corpus, TheShippedCorporaAreReadable) {
  const std::string root = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/";
  ParallelCorpus tiny = read(root + "tiny/train.en", root + "tiny/train.de");
  EXPECT_EQ(tiny.lines_read, 300u);
  const Lines val = read_lines(root + "multi30k/val.de.gz");
  EXPECT_EQ(read_lines(root + "tiny/val.de"), Lines(val.begin(), val.begin() + 50));
  ParallelCorpus test = read(root + "multi30k/test_2016_flickr.en.gz", root + "multi30k/test_2016_flickr.de.gz");
  EXPECT_EQ(test.lines_read, 1000u);
  EXPECT_EQ(test.size(), 1000u);
}

// A corpus of `lines` pairs drawn from the tiny corpus (some empty, some long), spanning
// several of the readers' chunks: source and target paths.
std::pair<std::string, std::string> many_lines(test::TempDir& dir, size_t lines) {
  const std::string root = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/tiny/";
  const Lines en = read_lines(root + "train.en"), de = read_lines(root + "train.de");
  std::mt19937 random(5);
  std::string src, tgt;
  for (size_t k = 0; k < lines; ++k) {
    const size_t a = random() % en.size(), b = random() % en.size();
    const bool empty = random() % 50 == 0;
    src += (empty ? "" : en[a] + " " + en[b]) + "\n";
    tgt += de[a] + "\n";
  }
  return {dir.write("many.en", src), dir.write("many.de", tgt)};
}

// Chunked and threaded, the reading is what reading each line alone gives, in order, with
// the same counts, on 1 and 3 threads; so are the vocabulary counts.
TEST_F(Corpus, ThreadsReadWhatOneLineAtATimeGives) {
  const auto [src, tgt] = many_lines(dir, 40000);
  const auto en = test::tokenized_lines(src, {}), de = test::tokenized_lines(tgt, {});
  const Vocab en_vocab = Vocab::build(en, 1), de_vocab = Vocab::build(de, 1);
  ParallelCorpus expected{CorpusSide(en_vocab.size()), CorpusSide(de_vocab.size())};
  size_t empty = 0, too_long = 0;
  for (size_t k = 0; k < en.size(); ++k) {
    if (en[k].empty() || de[k].empty()) {
      ++empty;
    } else if (en[k].size() > 20 || de[k].size() > 20) {
      ++too_long;
    } else {
      expected.src.push_back(en_vocab.encode(en[k]));
      expected.tgt.push_back(de_vocab.encode(de[k]));
    }
  }
  ASSERT_GT(empty, 0u);
  ASSERT_GT(too_long, 0u);
  TokenCounts expected_counts;
  for (const auto& sentence : en)
    for (const auto& token : sentence) ++expected_counts[token];
  for (int threads : {1, 3}) {
    const ParallelCorpus read = read_parallel_corpus(src, tgt, Subwords{}, Subwords{}, en_vocab, de_vocab, {}, 20, threads);
    EXPECT_TRUE(read.src == expected.src && read.tgt == expected.tgt) << threads;
    EXPECT_EQ(std::make_tuple(read.lines_read, read.skipped_empty, read.skipped_too_long),
              std::make_tuple(en.size(), empty, too_long));
    TokenCounts counts;
    EXPECT_EQ(count_tokens(src, {}, Subwords{}, counts, threads), en.size());
    EXPECT_TRUE(counts == expected_counts) << threads;
  }
}

// Errors found past the first chunk, on several threads, still name the first bad line.
TEST_F(Corpus, ThreadsNameTheFirstBadLine) {
  std::string good, bad, longer;
  for (int k = 1; k <= 40000; ++k) {
    good += "a dog runs .\n";
    bad += k == 30001 || k == 30500 ? "Stra\xDF" "e\n" : "a dog runs .\n";
  }
  longer = good + "one more\n";
  const std::string good_path = dir.write("good", good), bad_path = dir.write("bad", bad);
  const std::string longer_path = dir.write("longer", longer);
  auto read_on = [&](const std::string& s, const std::string& t) {
    read_parallel_corpus(s, t, Subwords{}, Subwords{}, src_vocab, tgt_vocab, {}, 0, 3);
  };
  EXPECT_EQ(test::error_of([&] { read_on(good_path, bad_path); }), bad_path + ":30001: invalid UTF-8");
  EXPECT_NE(test::error_of([&] { read_on(good_path, longer_path); }).find("(line 40001)"), std::string::npos);
  TokenCounts counts;
  EXPECT_EQ(test::error_of([&] { count_tokens(bad_path, {}, Subwords{}, counts, 3); }),
            bad_path + ":30001: invalid UTF-8");
}

// A corpus streamed chunk by chunk into the cache maps back as the corpus read whole; the
// writer's scratch files are gone afterwards, and also when it is abandoned unfinished.
TEST_F(Corpus, CacheWrittenChunkByChunkIsTheWholeCorpus) {
  const auto [src, tgt] = many_lines(dir, 40000);
  const Vocab en_vocab = Vocab::build(test::tokenized_lines(src, {}), 1);
  const Vocab de_vocab = Vocab::build(test::tokenized_lines(tgt, {}), 1);
  const ParallelCorpus whole = read_parallel_corpus(src, tgt, Subwords{}, Subwords{}, en_vocab, de_vocab, {}, 20);
  const std::string path = dir.path("corpus.bin");
  size_t chunks = 0;
  {
    CorpusCacheWriter writer(path, "key");
    stream_parallel_corpus(src, tgt, Subwords{}, Subwords{}, en_vocab, de_vocab, {}, 20, 2, [&](const ParallelCorpus& chunk) {
      writer.add(chunk);
      ++chunks;
    });
    writer.finish();
  }
  EXPECT_GT(chunks, 1u);
  std::string problem;
  const auto cached = map_corpus_cache(path, "key", en_vocab.size(), de_vocab.size(), problem);
  ASSERT_TRUE(cached) << problem;
  EXPECT_TRUE(cached->src == whole.src && cached->tgt == whole.tgt);
  EXPECT_EQ(std::make_tuple(cached->lines_read, cached->skipped_empty, cached->skipped_too_long),
            std::make_tuple(whole.lines_read, whole.skipped_empty, whole.skipped_too_long));
  { CorpusCacheWriter(dir.path("abandoned.bin"), "key").add(whole); }
  EXPECT_FALSE(std::filesystem::exists(dir.path("abandoned.bin")));
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path("")))
    files += entry.path().string().find(".tmp.") != std::string::npos;
  EXPECT_EQ(files, 0u) << "scratch files left";
}

// The corpus a cache file holds, or its problem (both vocabularies of `vocab_size`).
std::optional<ParallelCorpus> mapped(const std::string& path, const std::string& key, std::string& problem,
                                     size_t vocab_size = 100000) {
  problem.clear();
  return map_corpus_cache(path, key, vocab_size, vocab_size, problem);
}

// Written and mapped back, a corpus is the one read from the text: both sides (16-bit ids
// here, 32-bit below) and the reading's counts.
TEST_F(Corpus, CacheMapsBackTheCorpusItWasWrittenFrom) {
  const std::string root = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/tiny/";
  const Vocab en = Vocab::build(test::tokenized_lines(root + "train.en", {}), 1);
  const Vocab de = Vocab::build(test::tokenized_lines(root + "train.de", {}), 1);
  const ParallelCorpus text =
      read_parallel_corpus(root + "train.en", root + "train.de", Subwords{}, Subwords{}, en, de, {}, 12);
  ASSERT_GT(text.skipped_too_long, 0u);
  const std::string path = dir.path("corpus.bin");
  write_corpus_cache(path, text, "key");
  std::string problem;
  const auto cached = mapped(path, "key", problem);
  ASSERT_TRUE(cached) << problem;
  EXPECT_TRUE(cached->src == text.src);
  EXPECT_TRUE(cached->tgt == text.tgt);
  EXPECT_EQ(cached->src.narrow(), true);
  EXPECT_EQ(std::make_tuple(cached->lines_read, cached->skipped_empty, cached->skipped_too_long),
            std::make_tuple(text.lines_read, text.skipped_empty, text.skipped_too_long));

  ParallelCorpus wide{CorpusSide(100000), CorpusSide(100000)};
  wide.src.push_back({99999, 7, Vocab::kEos});
  wide.tgt.push_back({70000, Vocab::kEos});
  write_corpus_cache(path, wide, "wide");
  const auto wide_cached = mapped(path, "wide", problem);
  ASSERT_TRUE(wide_cached) << problem;
  EXPECT_TRUE(wide_cached->src == wide.src && wide_cached->tgt == wide.tgt);
  EXPECT_FALSE(wide_cached->src.narrow());
  // The first mapping still reads the file it mapped, though the path now names another.
  EXPECT_TRUE(cached->src == text.src);
}

// The fuzz target's seed, written by hand from the layout in corpus_cache.h (not by
// write_corpus_cache), maps as the corpus it spells out: the documented format is the one read.
TEST_F(Corpus, CacheFormatIsTheDocumentedOne) {
  std::string problem;
  const auto seed = mapped(std::string(RNNSEARCH_SOURCE_DIR) + "/tests/fuzz/corpus/corpus_cache/whole", "key", problem, 100);
  ASSERT_TRUE(seed) << problem;
  ParallelCorpus expected{CorpusSide(100), CorpusSide(100)};
  for (const auto& [src, tgt] : std::vector<std::pair<std::vector<int>, std::vector<int>>>{
           {{4, 5, 3}, {10, 3}}, {{6, 3}, {11, 12, 3}}, {{7, 8, 9, 3}, {13, 3}}}) {
    expected.src.push_back(src);
    expected.tgt.push_back(tgt);
  }
  EXPECT_TRUE(seed->src == expected.src && seed->tgt == expected.tgt);
  EXPECT_EQ(std::make_tuple(seed->lines_read, seed->skipped_empty, seed->skipped_too_long), std::make_tuple(4u, 1u, 0u));
}

// A cache made from other data, or damaged in any way, is refused with its reason, never
// thrown on or trusted.
TEST_F(Corpus, CacheRefusesStaleAndDamagedFiles) {
  ParallelCorpus corpus{CorpusSide(100), CorpusSide(100)};
  for (int k = 0; k < 50; ++k) {
    corpus.src.push_back({4 + k % 7, 5, Vocab::kEos});
    corpus.tgt.push_back({4 + k % 5, Vocab::kEos});
  }
  const std::string good = dir.path("good.bin");
  write_corpus_cache(good, corpus, "key");
  const std::string bytes = read_file(good);
  std::string problem;
  ASSERT_TRUE(mapped(good, "key", problem)) << problem;
  EXPECT_FALSE(mapped(good, "other key", problem));
  EXPECT_EQ(problem.find("made from other data"), 0u) << problem;
  EXPECT_FALSE(mapped(dir.path("none.bin"), "key", problem));
  EXPECT_EQ(problem, "not written yet");
  EXPECT_TRUE(mapped(good, "key", problem, 11)) << problem;  // source ids go up to 10
  EXPECT_FALSE(mapped(good, "key", problem, 10));
  EXPECT_EQ(problem, "damaged: an id is outside the vocabulary");

  std::string flipped_id = bytes, flipped_header = bytes;
  flipped_id[bytes.size() - 9] ^= 1;              // an id of the last array
  flipped_header[bytes.find("\"sentences\":50") + 12] = '4';  // 40 sentences
  const std::vector<std::pair<std::string, std::string>> damages = {
      {bytes.substr(0, bytes.size() - 8), "its size"},   {bytes + std::string(8, '\0'), "its size"},
      {flipped_id, "its checksum"},                     {flipped_header, "its size"},
      {"RNNSCORQ" + bytes.substr(8), "not a corpus cache"}, {bytes.substr(0, 20), "header is cut short"},
      {bytes.substr(0, 16) + std::string(bytes.size() - 16, ' '), "not JSON"}, {"", "empty"}};
  for (const auto& [content, reason] : damages) {
    const std::string path = dir.write("damaged.bin", content);
    EXPECT_FALSE(mapped(path, "key", problem)) << reason;
    EXPECT_EQ(problem.find("damaged: "), 0u) << problem;
    EXPECT_NE(problem.find(reason), std::string::npos) << problem;
  }
}

}  // namespace
}  // namespace rnnsearch

#include "rnnsearch/text/corpus.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "rnnsearch/error.h"
#include "rnnsearch/text/line_reader.h"
#include "error_of.h"
#include "temp_dir.h"

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

}  // namespace
}  // namespace rnnsearch

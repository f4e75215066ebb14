#include "rnnsearch/text/vocab.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "rnnsearch/error.h"
#include "rnnsearch/text/corpus.h"
#include "rnnsearch/text/line_reader.h"
#include "support/error_of.h"
#include "support/temp_dir.h"
#include "support/tokenized_text.h"

namespace rnnsearch {
namespace {

using Sentences = std::vector<std::vector<std::string>>;
using Tokens = std::vector<std::string>;

Tokens tokens_of(const Vocab& vocab) {
  Tokens tokens;
  for (size_t i = 0; i < vocab.size(); ++i) tokens.push_back(vocab.token(static_cast<int>(i)));
  return tokens;
}

TEST(Vocab, StartsWithTheFourSpecials) {
  Vocab vocab;
  EXPECT_EQ(tokens_of(vocab), (Tokens{"<pad>", "<unk>", "<s>", "</s>"}));
  EXPECT_EQ(vocab.id("<pad>"), Vocab::kPad);
  EXPECT_EQ(vocab.id("<unk>"), Vocab::kUnk);
  EXPECT_EQ(vocab.id("<s>"), Vocab::kBos);
  EXPECT_EQ(vocab.id("</s>"), Vocab::kEos);
}

TEST(Vocab, BuildOrdersByFrequencyThenCodePoint) {
  // Counts: b 3, a 2, c 2, ä 2, z 2, é 2, x 1.  Ties go by code point: a < c < z < ä < é
  // (U+00E4 < U+00E9), which is also UTF-8 byte order.
  Sentences sentences = {{"b", "z", "ä", "a"}, {"b", "é", "c", "x"}, {"b", "c", "a", "ä", "z", "é"}};
  Vocab vocab = Vocab::build(sentences, 2);
  EXPECT_EQ(tokens_of(vocab),
            (Tokens{"<pad>", "<unk>", "<s>", "</s>", "b", "a", "c", "z", "ä", "é"}));
}

TEST(Vocab, MinCountAndMaxSize) {
  Sentences sentences = {{"a", "a", "a", "b", "b", "c"}};
  EXPECT_EQ(Vocab::build(sentences, 1).size(), 7u);
  EXPECT_EQ(Vocab::build(sentences, 2).size(), 6u);
  EXPECT_EQ(Vocab::build(sentences, 3).size(), 5u);
  EXPECT_EQ(Vocab::build(sentences, 4).size(), 4u);
  // max_size counts the specials and keeps the most frequent tokens.
  Vocab capped = Vocab::build(sentences, 1, 5);
  EXPECT_EQ(tokens_of(capped), (Tokens{"<pad>", "<unk>", "<s>", "</s>", "a"}));
  EXPECT_EQ(Vocab::build(sentences, 1, 100).size(), 7u);
  EXPECT_THROW(Vocab::build(sentences, 1, 3), Error);
}

TEST(Vocab, SpecialTokensInTheTextAreNotAddedTwice) {
  Vocab vocab = Vocab::build({{"<unk>", "<unk>", "dog", "dog"}}, 2);
  EXPECT_EQ(tokens_of(vocab), (Tokens{"<pad>", "<unk>", "<s>", "</s>", "dog"}));
}

TEST(Vocab, EncodeAndDecode) {
  Vocab vocab = Vocab::build({{"a", "dog", "a", "dog", "runs"}}, 2);
  const int a = vocab.id("a"), dog = vocab.id("dog");
  EXPECT_NE(a, Vocab::kUnk);
  EXPECT_NE(dog, Vocab::kUnk);
  EXPECT_EQ(vocab.id("runs"), Vocab::kUnk);
  EXPECT_EQ(vocab.encode({"a", "dog", "runs"}), (std::vector<int>{a, dog, Vocab::kUnk, Vocab::kEos}));
  EXPECT_EQ(vocab.encode({}), (std::vector<int>{Vocab::kEos}));
  EXPECT_EQ(vocab.decode({Vocab::kBos, a, Vocab::kPad, dog, Vocab::kEos, a}), (Tokens{"a", "dog"}));
  EXPECT_EQ(vocab.decode({a, Vocab::kUnk}), (Tokens{"a", "<unk>"}));
}

TEST(Vocab, SaveLoadRoundTrip) {
  test::TempDir dir;
  Vocab vocab = Vocab::build({{"straße", "über", "straße", "über", "žena", "žena", "a", "a", "a"}}, 2);
  const std::string path = dir.path("vocab.de");
  vocab.save(path);
  Vocab loaded = Vocab::load(path);
  EXPECT_EQ(tokens_of(loaded), tokens_of(vocab));
  for (const auto& token : tokens_of(vocab)) EXPECT_EQ(loaded.id(token), vocab.id(token));
  // One token per line, nothing else: the format other tools read.
  EXPECT_EQ(read_lines(path), tokens_of(vocab));
  // Saving again replaces the file and leaves no temporary behind.
  Vocab().save(path);
  EXPECT_EQ(Vocab::load(path).size(), 4u);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path("")),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(Vocab, LoadRefusesBadFilesNamingFileAndLine) {
  test::TempDir dir;
  const std::string specials = "<pad>\n<unk>\n<s>\n</s>\n";

  std::string path = dir.write("swapped", "<pad>\n<s>\n<unk>\n</s>\ndog\n");
  std::string message = test::error_of([&] { Vocab::load(path); });
  EXPECT_NE(message.find(path + ":2: "), std::string::npos) << message;
  EXPECT_NE(message.find("<unk>"), std::string::npos) << message;

  path = dir.write("duplicate", specials + "dog\ncat\ndog\n");
  message = test::error_of([&] { Vocab::load(path); });
  EXPECT_NE(message.find(path + ":7: "), std::string::npos) << message;
  EXPECT_NE(message.find("duplicate"), std::string::npos) << message;
  EXPECT_NE(message.find("line 5"), std::string::npos) << message;

  path = dir.write("special-again", specials + "dog\n<unk>\n");
  message = test::error_of([&] { Vocab::load(path); });
  EXPECT_NE(message.find(path + ":6: duplicate"), std::string::npos) << message;

  path = dir.write("empty-line", specials + "dog\n\ncat\n");
  message = test::error_of([&] { Vocab::load(path); });
  EXPECT_NE(message.find(path + ":6: empty line"), std::string::npos) << message;

  path = dir.write("space", specials + "dog\nhot dog\n");
  message = test::error_of([&] { Vocab::load(path); });
  EXPECT_NE(message.find(path + ":6: 'hot dog' contains white space"), std::string::npos) << message;

  path = dir.write("short", "<pad>\n<unk>\n");
  message = test::error_of([&] { Vocab::load(path); });
  EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;

  path = dir.path("missing");
  message = test::error_of([&] { Vocab::load(path); });
  EXPECT_EQ(message.rfind(path + ": cannot open", 0), 0u) << message;
}

TEST(Vocab, LoadAcceptsCrLfLines) {
  test::TempDir dir;
  Vocab vocab = Vocab::load(dir.write("crlf", "<pad>\r\n<unk>\r\n<s>\r\n</s>\r\ndog\r\n"));
  EXPECT_EQ(vocab.size(), 5u);
  EXPECT_EQ(vocab.id("dog"), 4);
}

// The vocabulary train and vocab build: counted from the streamed file.
Vocab streamed_vocab(const std::string& path, const TokenizerOptions& tokenizer, int min_count) {
  TokenCounts counts;
  count_tokens(path, tokenizer, Subwords(), counts);
  return Vocab::build(counts, min_count);
}

// The sizes docs/design.md §3 promises, the same as the PyTorch reference's on Multi30k.
TEST(Vocab, Multi30kTrainSizesMatchTheReference) {
  const std::string dir = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/multi30k/";
  EXPECT_EQ(streamed_vocab(dir + "train.en.gz", {}, 2).size(), 5898u);
  EXPECT_EQ(streamed_vocab(dir + "train.de.gz", {}, 2).size(), 7882u);
}

// A text of Zipf-distributed words (many ties among the rare ones), mixed case, punctuation,
// non-ASCII letters, empty lines and CRLF endings.
std::string generated_text(unsigned seed) {
  const std::vector<std::string> syllables = {"ka", "Ü", "ße", "ž", "Lo", "mi", "é", "T", "ñá", "x"};
  const std::vector<std::string> punctuation = {",", ".", "-", "«", "»", "…"};
  std::mt19937 random(seed);
  std::string text;
  for (int line = 0; line < 3000; ++line) {
    const int words = static_cast<int>(random() % 25);
    for (int w = 0; w < words; ++w) {
      // Word k = 1 + N/(1 + u), u uniform below N: word 1 is half of the text, hundreds occur
      // once or twice.
      const unsigned k = 1 + 100000 / (1 + random() % 100000);
      std::string word;
      for (unsigned rest = k; rest > 0; rest /= syllables.size()) word += syllables[rest % syllables.size()];
      text += (w ? " " : "") + word + (random() % 7 == 0 ? punctuation[random() % punctuation.size()] : "");
    }
    text += line % 11 == 0 ? "\r\n" : "\n";
  }
  return text;
}

// Counting a streamed file gives exactly the vocabulary that the file's token lists held in
// memory give (what training built its vocabularies from before it streamed), for every
// tokenizer and min-count, on the shipped tiny corpus and on a generated text.
TEST(Vocab, StreamedCountsGiveTheVocabularyOfTheTokenLists) {
  test::TempDir dir;
  const std::string tiny = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/tiny/";
  const TokenizerOptions cased{TokenizerKind::words, false}, raw{TokenizerKind::raw, false};
  for (const std::string& path : {tiny + "train.en", tiny + "train.de", dir.write("generated", generated_text(7))}) {
    for (const TokenizerOptions& tokenizer : {TokenizerOptions{}, cased, raw}) {
      const Sentences sentences = test::tokenized_lines(path, tokenizer);
      for (int min_count : {1, 2, 3}) {
        const Vocab streamed = streamed_vocab(path, tokenizer, min_count);
        EXPECT_EQ(tokens_of(streamed), tokens_of(Vocab::build(sentences, min_count))) << path;
        EXPECT_GT(streamed.size(), 100u) << path;  // a real vocabulary, not just the specials
      }
    }
  }
}

}  // namespace
}  // namespace rnnsearch

// Subword units: pieces join back into exactly the words they came from, word alignments
// are proper distributions built from the pieces' attention, and a model trained with
// --subwords translates and scores in whole words.
#include <gtest/gtest.h>
#include <sentencepiece_processor.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "rnnsearch/decode/hypothesis.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/text/corpus.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/text/subwords.h"
#include "support/error_of.h"
#include "support/temp_dir.h"
#include "support/tokenized_text.h"

namespace rnnsearch {
namespace {

using Words = std::vector<std::string>;
const std::string kTiny = std::string(RNNSEARCH_SOURCE_DIR) + "/corpora/tiny/";

TEST(JoinPieces, WordStartsBeginWords) {
  std::vector<int> word_of_piece;
  EXPECT_EQ(join_pieces({"▁ein", "▁klein", "es", "▁mädchen"}, false, &word_of_piece),
            (Words{"ein", "kleines", "mädchen"}));
  EXPECT_EQ(word_of_piece, (std::vector<int>{0, 1, 1, 2}));
  // A lone ▁ begins the word its next piece spells; a first piece without ▁ still begins one.
  EXPECT_EQ(join_pieces({"x", "▁", "ab", "c", "▁d"}, false, &word_of_piece), (Words{"x", "abc", "d"}));
  EXPECT_EQ(word_of_piece, (std::vector<int>{0, 1, 1, 1, 2}));
  // Word-level models: every token is a word, ▁ or not.
  EXPECT_EQ(join_pieces({"a", "b"}, true, &word_of_piece), (Words{"a", "b"}));
  EXPECT_EQ(word_of_piece, (std::vector<int>{0, 1}));
}

TEST(WordAlignment, SumsSourcePiecesAndAveragesTargetPieces) {
  // 3 target pieces (words 0, 0, 1) + </s>; 3 source pieces (words 0, 1, 1) + </s>
  Alignment pieces{4, 4, {0.1f, 0.2f, 0.3f, 0.4f,  //
                          0.5f, 0.1f, 0.1f, 0.3f,  //
                          0.0f, 0.6f, 0.4f, 0.0f,  //
                          0.2f, 0.2f, 0.2f, 0.4f}};
  const Alignment words = word_alignment(pieces, {0, 0, 1}, 2, {0, 1, 1}, 2);
  ASSERT_EQ(words.rows, 3);
  ASSERT_EQ(words.cols, 3);
  EXPECT_FLOAT_EQ(words.at(0, 0), (0.1f + 0.5f) / 2);
  EXPECT_FLOAT_EQ(words.at(0, 1), (0.2f + 0.3f + 0.1f + 0.1f) / 2);
  EXPECT_FLOAT_EQ(words.at(1, 1), 1.0f);
  EXPECT_FLOAT_EQ(words.at(2, 2), 0.4f);
  for (int i = 0; i < words.rows; ++i) EXPECT_NEAR(words.at(i, 0) + words.at(i, 1) + words.at(i, 2), 1.0f, 1e-6);
}

TEST(Subwords, LearntPiecesJoinBackIntoTheWords) {
  for (SubwordType type : {SubwordType::bpe, SubwordType::unigram}) {
    const auto sentences = test::tokenized_lines(kTiny + "train.de", {});
    test::TempDir dir;
    write_file_atomically(dir.path("m.model"), Subwords::train({kTiny + "train.de"}, {}, 300, type, 0));
    const Subwords subwords = Subwords::load(dir.path("m.model"));
    size_t pieces_total = 0, words_total = 0;
    for (const auto& words : sentences) {
      std::vector<int> word_of_piece;
      const auto pieces = subwords.encode(words, &word_of_piece);
      ASSERT_EQ(join_pieces(pieces, false), words) << subword_type_name(type);
      ASSERT_EQ(word_of_piece.size(), pieces.size());
      pieces_total += pieces.size();
      words_total += words.size();
    }
    EXPECT_GT(pieces_total, words_total) << "300 pieces cannot hold every word of the text whole";
  }
}

// A model's pieces and their scores, in id order: all that encoding depends on (the model
// file also records the options it was learnt with, the sample size among them).
std::vector<std::pair<std::string, float>> pieces_of(const std::string& model) {
  sentencepiece::SentencePieceProcessor processor;
  EXPECT_TRUE(processor.LoadFromSerializedProto(model).ok());
  std::vector<std::pair<std::string, float>> pieces;
  for (int id = 0; id < processor.GetPieceSize(); ++id) pieces.emplace_back(processor.IdToPiece(id), processor.GetScore(id));
  return pieces;
}

// A joint model streams the source file, then the target file: it has the pieces of the
// model of the two sides concatenated (what training learnt on before it streamed),
// whatever the sample size as long as the sample holds every sentence.
TEST(Subwords, JointModelOfTwoFilesIsTheModelOfTheirConcatenation) {
  test::TempDir dir;
  const std::string en = kTiny + "train.en", de = kTiny + "train.de";
  const std::string both = dir.write("both", read_file(en) + read_file(de));
  const size_t sentences = read_lines(both).size();
  for (SubwordType type : {SubwordType::bpe, SubwordType::unigram}) {
    const auto whole = pieces_of(Subwords::train({both}, {}, 400, type, 0));
    ASSERT_GT(whole.size(), 300u);
    for (size_t sample : {sentences, sentences + 1, size_t{2000000}})
      EXPECT_EQ(pieces_of(Subwords::train({en, de}, {}, 400, type, sample)), whole)
          << subword_type_name(type) << " " << sample;
    EXPECT_NE(pieces_of(Subwords::train({en, de}, {}, 400, type, sentences / 2)), whole) << subword_type_name(type);
  }
}

// With fewer sentences than the text has, SentencePiece learns on a random sample of that
// many, the same one every time: every line below has a character no other line has, and
// full character coverage makes each character of the sample a piece.
TEST(Subwords, LearnsOnARandomSampleOfTheSentences) {
  test::TempDir dir;
  std::string text;
  std::vector<std::string> characters;  // one per line
  for (char32_t c = 0x4E00; c < 0x4E00 + 2000; ++c) {
    characters.push_back({static_cast<char>(0xE0 | (c >> 12)), static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
                          static_cast<char>(0x80 | (c & 0x3F))});
    text += "a dog " + characters.back() + " runs\n";
  }
  const std::string path = dir.write("text", text);
  // How many of `candidates` are pieces of `model`.
  auto known = [](const std::string& model, const std::vector<std::string>& candidates) {
    const auto pieces = pieces_of(model);
    return std::count_if(candidates.begin(), candidates.end(), [&](const std::string& candidate) {
      return std::any_of(pieces.begin(), pieces.end(), [&](const auto& piece) { return piece.first == candidate; });
    });
  };
  const std::string sampled = Subwords::train({path}, {}, 2100, SubwordType::bpe, 200);
  EXPECT_EQ(known(sampled, characters), 200);
  EXPECT_LT(known(sampled, {characters.begin(), characters.begin() + 200}), 200) << "a sample, not the first lines";
  EXPECT_EQ(pieces_of(Subwords::train({path}, {}, 2100, SubwordType::bpe, 200)), pieces_of(sampled));
  EXPECT_EQ(known(Subwords::train({path}, {}, 2100, SubwordType::bpe, 0), characters), 2000);
}

// Errors met while SentencePiece reads the text reach the user as the readers word them.
TEST(Subwords, BadTrainingTextIsNamedWithItsLine) {
  test::TempDir dir;
  const std::string good = dir.write("good", "a dog\nruns\n");
  const std::string latin1 = dir.write("latin1", "a\nStra\xDF" "e\nc\n");
  const std::string missing = dir.path("missing");
  EXPECT_EQ(test::error_of([&] { Subwords::train({good, latin1}, {}, 50, SubwordType::bpe, 0); }),
            latin1 + ":2: invalid UTF-8");
  EXPECT_EQ(test::error_of([&] { Subwords::train({good, missing}, {}, 50, SubwordType::bpe, 0); }),
            missing + ": cannot open: No such file or directory");
}

// The vocabulary of a model's pieces, counted from the streamed file, is the one the pieces
// of the file's token lists held in memory give.
TEST(Subwords, StreamedPieceCountsGiveTheVocabularyOfThePieceLists) {
  test::TempDir dir;
  const std::string en = kTiny + "train.en", de = kTiny + "train.de";
  write_file_atomically(dir.path("m.model"), Subwords::train({en, de}, {}, 400, SubwordType::bpe, 0));
  const Subwords subwords = Subwords::load(dir.path("m.model"));
  for (const std::string& path : {en, de}) {
    TokenCounts counts;
    count_tokens(path, {}, subwords, counts);
    std::vector<std::vector<std::string>> pieces;
    for (const auto& words : test::tokenized_lines(path, {})) pieces.push_back(subwords.encode(words));
    const Vocab streamed = Vocab::build(counts, 1), in_memory = Vocab::build(pieces, 1);
    ASSERT_EQ(streamed.size(), in_memory.size()) << path;
    for (size_t id = 0; id < streamed.size(); ++id)
      ASSERT_EQ(streamed.token(static_cast<int>(id)), in_memory.token(static_cast<int>(id))) << path;
    EXPECT_GT(streamed.size(), 100u) << path;
  }
}

// Random lines of letters the model knows and characters it does not (Cyrillic, CJK, emoji,
// a combining accent, a zero-width joiner, digits, punctuation).
std::string random_lines(unsigned seed) {
  const std::vector<std::string> alphabet = {"a", "e", "n", "r", "ä", "ß", "Ж", "ж", "象", "🙂", "\u0301",
                                             "\u200D", "7", ".", "-", " ", " ", " "};
  std::mt19937 random(seed);
  std::string text;
  for (int line = 0; line < 300; ++line) {
    for (unsigned n = random() % 40; n > 0; --n) text += alphabet[random() % alphabet.size()];
    text += "\n";
  }
  return text;
}

// Cut word by word and remembered (BPE), the words of a text get exactly the pieces of their
// whole sentence: on text the model learnt from, on text it did not (unknown characters in
// runs, next to each other across words, a literal ▁), with room for every word or for a few.
TEST(Subwords, PieceCacheCutsAsTheWholeSentence) {
  test::TempDir dir;
  const std::string unseen = dir.write("unseen",
                                       "Жж ЖЖ жук 象 象象 a象 b\n"
                                       "a▁b ▁ ▁x x▁ 🙂🙂 🙂 ok, Straße!\n"
                                       "\n"
                                       "Zwei Männer stehen am Herd und bereiten Essen zu.\n" +
                                           random_lines(3));
  const TokenizerOptions raw{TokenizerKind::raw, false};
  for (SubwordType type : {SubwordType::bpe, SubwordType::unigram}) {
    for (const TokenizerOptions& tokenizer : {TokenizerOptions{}, raw}) {
      write_file_atomically(dir.path("m.model"),
                            Subwords::train({kTiny + "train.en", kTiny + "train.de"}, tokenizer, 300, type, 0));
      const Subwords subwords = Subwords::load(dir.path("m.model"));
      EXPECT_EQ(subwords.cuts_words_alone(), type == SubwordType::bpe);
      for (size_t capacity : {size_t{1} << 19, size_t{5}}) {
        PieceCache cache(subwords, capacity);
        for (const std::string& path : {kTiny + "val.en", kTiny + "val.de", unseen})
          for (const auto& words : test::tokenized_lines(path, tokenizer))
            ASSERT_EQ(cache.encode(words), subwords.encode(words)) << subword_type_name(type) << " " << capacity;
      }
    }
  }
}

TEST(Subwords, CorruptModelFileIsNamed) {
  test::TempDir dir;
  const std::string path = dir.write("bad.model", "not a model");
  const std::string message = test::error_of([&] { Subwords::load(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

}  // namespace
}  // namespace rnnsearch

// Raw text (docs/design.md §3): the raw tokenizer, and config.json's "kind" (models from
// before the option load as word-level ones). The models trained and run end to end are in
// test_cli_raw_text.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/text/tokenizer.h"
#include "support/error_of.h"
#include "support/fixtures.h"
#include "support/model_dir.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

using Words = std::vector<std::string>;
const TokenizerOptions kRaw{TokenizerKind::raw, false};

TEST(RawTokenizer, SplitsAtWhiteSpaceOnlyAndKeepsCase) {
  const TokenizerOptions lowercase_ignored{TokenizerKind::raw, true};
  EXPECT_EQ(tokenize("A man in a T-shirt, (smiling).\n", lowercase_ignored),
            Words({"A", "man", "in", "a", "T-shirt,", "(smiling)."}));
  // No-break space, tab, ideographic space and CRLF separate words too.
  EXPECT_EQ(tokenize("  Zwei\u00a0Männer\tund\u30003.5 <unk>  \r\n", kRaw),
            Words({"Zwei", "Männer", "und", "3.5", "<unk>"}));
  EXPECT_TRUE(tokenize(" \t\u3000 \n", kRaw).empty());
  // The word-level tokenizer is as before.
  EXPECT_EQ(tokenize("A T-shirt,"), Words({"a", "t", "-", "shirt", ","}));
}

TEST(RawTokenizer, OutputTextIsTheWordsWhateverDetokenizeSays) {
  const Words words = {"Ein", "Mann", "(", "rechts", ")", "."};
  const TokenizerOptions word_level;
  EXPECT_EQ(output_text(words, kRaw, true), "Ein Mann ( rechts ) .");
  EXPECT_EQ(output_text(words, kRaw, false), "Ein Mann ( rechts ) .");
  EXPECT_EQ(output_text(words, word_level, false), "Ein Mann ( rechts ) .");
  EXPECT_EQ(output_text(words, word_level, true), "Ein Mann (rechts).");
}

TEST(RawTokenizer, KindNamesParseAndOthersAreErrors) {
  EXPECT_EQ(parse_tokenizer_kind("raw"), TokenizerKind::raw);
  EXPECT_EQ(parse_tokenizer_kind("words"), TokenizerKind::words);
  EXPECT_STREQ(tokenizer_kind_name(TokenizerKind::raw), "raw");
  const std::string message = test::error_of([] { parse_tokenizer_kind("Raw"); });
  EXPECT_NE(message.find("words or raw, not 'Raw'"), std::string::npos) << message;
}

TEST(ModelKind, ConfigJsonSaysWhichKind) {
  const ModelConfig config = test::tiny_config(10, 10);
  EXPECT_EQ(model_config_json(config, kRaw, {})["tokenizer"], nlohmann::json({{"kind", "raw"}}));
  TokenizerOptions cased;
  cased.lowercase = false;
  EXPECT_EQ(model_config_json(config, cased, {})["tokenizer"],
            nlohmann::json({{"kind", "words"}, {"lowercase", false}}));

  test::TempDir dir;
  const std::string model = dir.path("m");
  test::write_model_dir(model, {"a", "b", "c", "d"}, {"x", "y", "z"}, 0.0f);
  test::set_tokenizer_json(model, {{"lowercase", false}});  // before the option: no "kind"
  ModelDefinition old = load_model_definition(model);
  EXPECT_EQ(old.tokenizer.kind, TokenizerKind::words);
  EXPECT_FALSE(old.tokenizer.lowercase);
  test::set_tokenizer_json(model, {{"kind", "raw"}, {"lowercase", true}});
  EXPECT_EQ(load_model_definition(model).tokenizer.kind, TokenizerKind::raw);
  EXPECT_FALSE(load_model_definition(model).tokenizer.lowercase) << "raw text keeps its case";
  test::set_tokenizer_json(model, {{"kind", "bytes"}});
  const std::string message = test::error_of([&] { load_model_definition(model); });
  EXPECT_NE(message.find(model_file(model, model_files::kConfig)), std::string::npos) << message;
  EXPECT_NE(message.find("words or raw, not 'bytes'"), std::string::npos) << message;
}

}  // namespace
}  // namespace rnnsearch

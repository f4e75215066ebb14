// Alignment text/JSON formats, the viridis scale and the SVG/HTML heatmaps, checked
// against hand-made matrices.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "rnnsearch/error.h"
#include "rnnsearch/decode/unk_replacement.h"
#include "rnnsearch/output/alignment.h"
#include "rnnsearch/output/heatmap.h"
#include "rnnsearch/io/atomic_file.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

namespace fs = std::filesystem;

size_t count_occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1))
    ++count;
  return count;
}

// Source "ein Haus ." (3 tokens + </s> = 4 columns), target "a house" (2 + </s> = 3 rows).
//   row 0 "a":     max at column 1          -> "1-0"
//   row 1 "house": max at column 3 (</s>)   -> "3-1"
//   row 2 </s>:    max at column 3          -> "3-2" (only with include_eos)
TranslationRecord small_record() {
  TranslationRecord record;
  record.line = 6;
  record.source = {"ein", "Haus", "."};
  record.target = {"a", "house"};
  record.score = -1.25;
  record.alignment.rows = 3;
  record.alignment.cols = 4;
  record.alignment.weights = {0.1f,  0.7f,  0.1f, 0.1f,  //
                              0.2f,  0.1f,  0.3f, 0.4f,  //
                              0.05f, 0.05f, 0.1f, 0.8f};
  return record;
}

TEST(Pharaoh, ArgmaxPerTargetRowWithoutEos) {
  EXPECT_EQ(pharaoh_alignment(small_record().alignment), "1-0 3-1");
}

TEST(Pharaoh, IncludeEosAddsTheLastRow) {
  EXPECT_EQ(pharaoh_alignment(small_record().alignment, true), "1-0 3-1 3-2");
}

TEST(Pharaoh, TiesGoToTheLeftmostColumnAndEmptyIsEmpty) {
  Alignment tie;
  tie.rows = 2;
  tie.cols = 3;
  tie.weights = {0.1f, 0.45f, 0.45f, 0.0f, 0.0f, 1.0f};
  EXPECT_EQ(pharaoh_alignment(tie), "1-0");
  EXPECT_EQ(pharaoh_alignment(Alignment{}), "");
}

TEST(Pharaoh, InconsistentMatrixThrows) {
  Alignment broken;
  broken.rows = 2;
  broken.cols = 2;
  broken.weights = {1.0f, 0.0f, 1.0f};
  EXPECT_THROW(pharaoh_alignment(broken), Error);
  EXPECT_THROW(soft_alignment_text(broken), Error);
}

TEST(SoftAlignment, RowsBySpaceWeightsByComma) {
  EXPECT_EQ(soft_alignment_text(small_record().alignment),
            "0.1,0.7,0.1,0.1 0.2,0.1,0.3,0.4 0.05,0.05,0.1,0.8");
  EXPECT_EQ(soft_alignment_text(Alignment{}), "");
}

TEST(SoftAlignment, RoundsToFourSignificantDigits) {
  Alignment a;
  a.rows = a.cols = 1;
  a.weights = {0.123456f};
  EXPECT_EQ(soft_alignment_text(a), "0.1235");
}

TEST(RecordJson, ParsesBackWithAllFields) {
  TranslationRecord record = small_record();
  record.source = {"Zürich", "北京", "\"q\""};
  record.alignment.weights[0] = 0.123456f;
  record.alignment.weights[1] = 0.676544f;
  const std::string text = record_json(record);
  EXPECT_EQ(text.find('\n'), std::string::npos);

  const auto json = nlohmann::json::parse(text);
  EXPECT_EQ(json.at("line").get<size_t>(), 6u);
  EXPECT_EQ(json.at("source").get<std::vector<std::string>>(), record.source);
  EXPECT_EQ(json.at("target").get<std::vector<std::string>>(),
            (std::vector<std::string>{"a", "house"}));
  EXPECT_DOUBLE_EQ(json.at("score").get<double>(), -1.25);
  const auto rows = json.at("alignment").get<std::vector<std::vector<double>>>();
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) ASSERT_EQ(row.size(), 4u);
  EXPECT_DOUBLE_EQ(rows[0][0], 0.1235);  // rounded to 4 significant digits
  EXPECT_DOUBLE_EQ(rows[0][1], 0.6765);
  EXPECT_DOUBLE_EQ(rows[1][3], 0.4);
  EXPECT_DOUBLE_EQ(rows[2][3], 0.8);
  EXPECT_NE(text.find("\"alignment\":[[0.1235,0.6765,0.1,0.1],"), std::string::npos) << text;
  EXPECT_NE(text.find("Zürich"), std::string::npos);  // UTF-8 is not \u-escaped
}

TEST(RecordJson, OmitsEmptyAlignmentAndKeepsFieldOrder) {
  TranslationRecord record;
  record.line = 0;
  record.source = {"hallo"};
  record.target = {"hello"};
  record.score = -0.5;
  EXPECT_EQ(record_json(record),
            R"({"line":0,"source":["hallo"],"target":["hello"],"score":-0.5})");
}

TEST(RecordJson, WrongShapeForTheSentenceThrows) {
  TranslationRecord record = small_record();
  record.target.push_back("extra");  // now needs 4 rows
  EXPECT_THROW(record_json(record), Error);
  EXPECT_THROW(heatmap_svg(record), Error);
}

TEST(Viridis, EndpointsMidpointAndClamping) {
  EXPECT_EQ(viridis_hex(0.0), "#440154");
  EXPECT_EQ(viridis_hex(1.0), "#fde725");
  EXPECT_EQ(viridis_hex(-3.0), "#440154");
  EXPECT_EQ(viridis_hex(7.5), "#fde725");
  EXPECT_EQ(viridis_hex(std::nan("")), "#440154");
  // matplotlib's viridis(0.5) is #21918c; the interpolated table may be off by one unit.
  const std::string mid = viridis_hex(0.5);
  ASSERT_EQ(mid.size(), 7u);
  const int r = std::stoi(mid.substr(1, 2), nullptr, 16),
            g = std::stoi(mid.substr(3, 2), nullptr, 16),
            b = std::stoi(mid.substr(5, 2), nullptr, 16);
  EXPECT_NEAR(r, 0x21, 2);
  EXPECT_NEAR(g, 0x91, 2);
  EXPECT_NEAR(b, 0x8c, 2);
}

TEST(Heatmap, OneRectPerCellAndEscapedTokens) {
  TranslationRecord record = small_record();
  record.source = {"<b>", "Tom & Jerry", "Zürich"};
  record.target = {"北京", "'quoted\""};
  const std::string svg = heatmap_svg(record);
  EXPECT_EQ(count_occurrences(svg, "<rect class=\"cell\""), 12u);  // 3 rows x 4 columns
  // the hard links outlined, one per target token (not </s>), inside the cell of its argmax
  EXPECT_EQ(count_occurrences(svg, "<rect class=\"link\""), 2u);
  const size_t cell = svg.find("<rect class=\"cell\" x=\""), link = svg.find("<rect class=\"link\" x=\"");
  const int x0 = std::stoi(svg.substr(cell + 22)), link_x = std::stoi(svg.substr(link + 22));
  EXPECT_EQ(link_x, x0 + 1 * 20 + 2) << "row 0's most attended column is 1 (Haus)";
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_NE(svg.find("Tom &amp; Jerry"), std::string::npos);
  EXPECT_EQ(svg.find("Tom & Jerry"), std::string::npos);
  EXPECT_NE(svg.find("&#39;quoted&quot;"), std::string::npos);
  EXPECT_NE(svg.find("Zürich"), std::string::npos);
  EXPECT_NE(svg.find("北京"), std::string::npos);
  EXPECT_NE(svg.find("&lt;/s&gt;"), std::string::npos);  // the </s> row and column labels
  EXPECT_NE(svg.find("-1.2500"), std::string::npos);     // score in the title
  EXPECT_NE(svg.find(viridis_hex(0.8)), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(Heatmap, LongSentenceGetsEveryCell) {
  TranslationRecord record;
  record.source.assign(55, "wort");
  record.target.assign(48, "word");
  record.alignment.rows = 49;
  record.alignment.cols = 56;
  record.alignment.weights.assign(49 * 56, 1.0f / 56);
  EXPECT_EQ(count_occurrences(heatmap_svg(record), "<rect class=\"cell\""), 49u * 56u);
}

// The x of the grid's first cell: the target labels' column is as wide as the widest one.
int grid_x(const std::string& svg) {
  const std::string key = "<rect class=\"cell\" x=\"";
  const size_t at = svg.find(key);
  return at == std::string::npos ? -1 : std::stoi(svg.substr(at + key.size()));
}

TEST(Heatmap, WideCharactersReserveAFullEm) {
  // Four narrow characters are 4 × 0.62 em, about as wide as the </s> label (30px at 12px);
  // four wide ones (East Asian Width W or F) take 4 em = 48px: the grid starts 18px later.
  TranslationRecord record = small_record();
  record.target = {"abcd", "ab"};
  const int narrow = grid_x(heatmap_svg(record));
  EXPECT_EQ(narrow, 12 + 30 + 6);  // margin + widest label + gap
  for (const char* wide : {"日本語文", "한국어문", "ＡＢＣＤ", "〇〆〜ぁ", "🐕🐕🐕🐕"}) {
    record.target = {wide, "ab"};
    EXPECT_EQ(grid_x(heatmap_svg(record)), narrow + 18) << wide;
  }
  for (const char* not_wide : {"ｱｲｳｴ", "Ωжéß"}) {  // half-width katakana, other scripts
    record.target = {not_wide, "ab"};
    EXPECT_EQ(grid_x(heatmap_svg(record)), narrow) << not_wide;
  }
}

TEST(Heatmap, LongTokensAreShortenedAtACharacterBoundary) {
  TranslationRecord record = small_record();
  const std::string latin(30, 'x'), twenty(20, 'y');
  std::string cjk;
  for (int k = 0; k < 25; ++k) cjk += "語";
  record.source = {latin, twenty, cjk};
  const std::string svg = heatmap_svg(record);
  // 19 characters and "…", with the whole token as the tooltip; 20 characters still fit.
  EXPECT_NE(svg.find("<title>" + latin + "</title>" + latin.substr(0, 19) + "\u2026</text>"),
            std::string::npos);
  EXPECT_NE(svg.find(">" + twenty + "</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>" + cjk + "</title>" + cjk.substr(0, 19 * 3) + "\u2026</text>"),
            std::string::npos);
}

TEST(Heatmap, WriteHeatmapsWritesEverySvgAndAnIndex) {
  const fs::path dir = fs::temp_directory_path() /
                       ("rnnsearch_heatmaps_" + std::to_string(std::random_device{}())) / "nested";
  std::vector<TranslationRecord> records(3, small_record());
  records[0].line = 0;
  records[1].line = 1;
  records[2].line = 4;
  records[2].source[0] = "a<b";

  const std::string index_path = write_heatmaps(dir.string(), records);
  EXPECT_EQ(fs::path(index_path), dir / "index.html");
  for (const char* name : {"00001.svg", "00002.svg", "00005.svg"}) {
    ASSERT_TRUE(fs::exists(dir / name)) << name;
    EXPECT_EQ(count_occurrences(read_file((dir / name).string()), "<rect class=\"cell\""), 12u);
  }
  EXPECT_EQ(read_file((dir / "00005.svg").string()), heatmap_svg(records[2]));

  const std::string html = read_file(index_path);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  for (const char* name : {"00001.svg", "00002.svg", "00005.svg"}) {
    EXPECT_NE(html.find(std::string("<img src=\"") + name + "\""), std::string::npos) << name;
    EXPECT_NE(html.find(std::string("<a href=\"") + name + "\""), std::string::npos) << name;
  }
  EXPECT_NE(html.find("a&lt;b Haus ."), std::string::npos);
  EXPECT_EQ(html.find("a<b"), std::string::npos);

  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) files += entry.path().extension() == ".svg";
  EXPECT_EQ(files, 3u);  // and no temporary files left behind
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 4);
  fs::remove_all(dir.parent_path());
}

TEST(Heatmap, RepeatedLinesDoNotOverwriteEachOther) {
  const fs::path dir = fs::temp_directory_path() /
                       ("rnnsearch_heatmaps_nbest_" + std::to_string(std::random_device{}()));
  std::vector<TranslationRecord> records(2, small_record());  // an n-best list of line 7
  write_heatmaps(dir.string(), records);
  EXPECT_TRUE(fs::exists(dir / "00007.svg"));
  EXPECT_TRUE(fs::exists(dir / "00007-2.svg"));
  fs::remove_all(dir);
}

// --replace-unk: an <unk> takes the source word of its row's largest weight (</s> never),
// or that word's dictionary entry.
TEST(UnkReplacement, TakesTheMostAttendedSourceWordOrItsTranslation) {
  Hypothesis h;
  h.words = {"<unk>", "sieht", "<unk>"};
  // rows: 3 words + </s>; columns: source "anna sees bob" + </s>
  h.alignment = {4, 4, {0.7f, 0.1f, 0.1f, 0.1f,  //
                        0.1f, 0.8f, 0.1f, 0.0f,  //
                        0.1f, 0.1f, 0.3f, 0.5f,  // </s> has the most, bob is the word
                        0.0f, 0.0f, 0.0f, 1.0f}};
  const std::vector<std::string> source = {"anna", "sees", "bob"};
  Hypothesis copied = h;
  UnkReplacement().apply(source, copied);
  EXPECT_EQ(copied.words, (std::vector<std::string>{"anna", "sieht", "bob"}));
  test::TempDir dir;
  UnkReplacement::load(dir.write("dict", "bob robert\nanna anne\n")).apply(source, h);
  EXPECT_EQ(h.words, (std::vector<std::string>{"anne", "sieht", "robert"}));
  EXPECT_NE(test::error_of([&] { UnkReplacement::load(dir.write("bad", "bob\n")); }).find("bad:1"), std::string::npos);
}

}  // namespace
}  // namespace rnnsearch

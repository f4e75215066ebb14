#pragma once
// A test that needs an optional library the build lacks (docs/building.md) is skipped, saying
// which, rather than failing:  RNNSEARCH_REQUIRE(sentencepiece, "SentencePiece (...)");
#include <gtest/gtest.h>

#include "rnnsearch/util/build_info.h"

#define RNNSEARCH_REQUIRE(feature, library) \
  if (!rnnsearch::build_info().feature) GTEST_SKIP() << "this build has no " library

#pragma once
// The message of the rnnsearch::Error that `f` throws; records a test failure and returns ""
// when it throws none.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "rnnsearch/error.h"

namespace rnnsearch::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no rnnsearch::Error thrown";
  return "";
}

}  // namespace rnnsearch::test



#include "rnnsearch/model/products.h"

namespace rnnsearch {

namespace {

thread_local int invariant_depth = 0;

}  // namespace

InvariantProducts::InvariantProducts(bool on) : on_(on) { invariant_depth += on_; }
InvariantProducts::~InvariantProducts() { invariant_depth -= on_; }

bool invariant_products() { return invariant_depth > 0; }

}  // namespace rnnsearch

#include "rnnsearch/kernels/onednn_matmul.h"

#include <array>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#ifdef RNNSEARCH_HAVE_ONEDNN
#include "rnnsearch/kernels/onednn_version.h"
#endif

namespace rnnsearch {

#ifdef RNNSEARCH_HAVE_ONEDNN

namespace {

// One matmul primitive per shape, made once and kept while it is in use: a primitive takes
// about as long to make (its kernels are JIT-compiled for the shape) as a product takes to run
// (docs/benchmarks.md, Where training time goes), and training and decoding meet the same shapes again and again (training slices its products
// so that they do: model/bf16_products.cpp). Primitives run concurrently on the training
// threads (each passes its own scratchpad), so the threads share them. Some shapes come and
// go (the number of live hypotheses in decoding); kept for ever, they would pile up
// primitives and their JIT code, so the cache keeps the kCachedShapes most
// recently used, and oneDNN's own primitive cache, which would keep the dropped ones alive,
// is bounded likewise.
constexpr size_t kCachedShapes = 256;

struct MatmulKey {
  // type, M, N, K, transpose_a, transpose_b, row strides of A, B and C, accumulate
  std::array<Index, 10> shape;
  bool operator<(const MatmulKey& other) const { return shape < other.shape; }
};

struct Matmul {
  dnnl::memory::desc a, b, c, scratchpad;
  dnnl::matmul primitive;
};

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Row-major rows×cols with row stride ld (or, transposed, the cols×rows matrix of row stride
// ld read as its transpose) as oneDNN's strides.
dnnl::memory::desc operand(Index rows, Index cols, Index ld, bool transposed, dnnl::memory::data_type type) {
  const dnnl::memory::dims strides = transposed ? dnnl::memory::dims{1, ld} : dnnl::memory::dims{ld, 1};
  return dnnl::memory::desc({rows, cols}, type, strides);
}

Matmul make_matmul(const MatmulKey& key) {
  const auto [type, M, N, K, transpose_a, transpose_b, lda, ldb, ldc, accumulate] = key.shape;
  using dt = dnnl::memory::data_type;
  const bool s8 = type == static_cast<Index>(MatmulType::s8);
  Matmul m;
  m.a = operand(M, K, lda, transpose_a != 0, s8 ? dt::s8 : dt::bf16);
  m.b = operand(K, N, ldb, transpose_b != 0, s8 ? dt::s8 : dt::bf16);
  m.c = dnnl::memory::desc({M, N}, s8 ? dt::s32 : dt::f32, dnnl::memory::dims{ldc, 1});
  dnnl::primitive_attr attr;
  // Each primitive would otherwise own a scratchpad (its operands repacked into blocks, MBs
  // for the vocabulary's width) for as long as it is cached; a thread's products run one at
  // a time, so they share one buffer per thread, the largest they need (onednn_matmul).
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (accumulate) {
    dnnl::post_ops sum;  // C = A B + C
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  const dnnl::matmul::primitive_desc descriptor = onednn_matmul_descriptor(cpu_engine(), m.a, m.b, m.c, attr);
  m.scratchpad = descriptor.scratchpad_desc();
  m.primitive = dnnl::matmul(descriptor);
  return m;
}

std::shared_ptr<const Matmul> matmul_for(const MatmulKey& key) {
  using Recent = std::list<std::pair<MatmulKey, std::shared_ptr<const Matmul>>>;  // most recently used first
  cpu_engine();  // made first, so that it outlives the cached primitives at exit
  static std::mutex mutex;
  static Recent recent;
  static std::map<MatmulKey, Recent::iterator> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto found = cache.find(key); found != cache.end()) {
      recent.splice(recent.begin(), recent, found->second);
      return recent.front().second;
    }
  }
  static std::once_flag onednn_cache_bounded;
  std::call_once(onednn_cache_bounded, [] { dnnl::set_primitive_cache_capacity(kCachedShapes); });
  // Made outside the lock, so that the other threads' products need not wait: another thread
  // may make the same shape meanwhile (oneDNN's cache makes that cheap), and the second to
  // finish uses the first one's.
  auto made = std::make_shared<const Matmul>(make_matmul(key));
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = cache.find(key); found != cache.end()) return found->second->second;
  recent.emplace_front(key, std::move(made));
  cache[key] = recent.begin();
  if (recent.size() > kCachedShapes) {  // a thread still running the dropped one holds it
    cache.erase(recent.back().first);
    recent.pop_back();
  }
  return recent.front().second;
}

}  // namespace

void onednn_matmul(MatmulType type, Index M, Index N, Index K, const void* A, Index lda, bool transpose_a,
                   const void* B, Index ldb, bool transpose_b, void* C, Index ldc, bool accumulate) {
  if (M == 0 || N == 0) return;
  if (N == 1 && ldc != 1) {
    // oneDNN 3.7's matmul (Debian 13) writes a wrong C when C is one column whose rows are
    // apart (dst strides {ldc, 1} with ldc > 1): that column is computed where its rows are
    // adjacent, then put in place. Its values, fp32 or int32, are 4 bytes each.
    thread_local std::vector<uint32_t> column;  // only grows
    if (column.size() < static_cast<size_t>(M)) column.resize(static_cast<size_t>(M));
    uint32_t* c = static_cast<uint32_t*>(C);
    if (accumulate)
      for (Index i = 0; i < M; ++i) column[static_cast<size_t>(i)] = c[i * ldc];
    onednn_matmul(type, M, 1, K, A, lda, transpose_a, B, ldb, transpose_b, column.data(), 1, accumulate);
    for (Index i = 0; i < M; ++i) c[i * ldc] = column[static_cast<size_t>(i)];
    return;
  }
  const auto matmul =
      matmul_for({{static_cast<Index>(type), M, N, K, transpose_a, transpose_b, lda, ldb, ldc, accumulate}});
  const Matmul& m = *matmul;  // kept alive by matmul, even if another thread evicts it meanwhile
  thread_local dnnl::stream stream(cpu_engine());
  // oneDNN reads the operands through non-const handles but does not write them
  dnnl::memory a(m.a, cpu_engine(), const_cast<void*>(A));
  dnnl::memory b(m.b, cpu_engine(), const_cast<void*>(B));
  dnnl::memory c(m.c, cpu_engine(), C);
  thread_local std::vector<uint8_t> scratchpad_buffer;  // only grows
  if (scratchpad_buffer.size() < m.scratchpad.get_size()) scratchpad_buffer.resize(m.scratchpad.get_size());
  dnnl::memory scratchpad(m.scratchpad, cpu_engine(), scratchpad_buffer.data());
  m.primitive.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c},
                               {DNNL_ARG_SCRATCHPAD, scratchpad}});
  stream.wait();
}

#else

void onednn_matmul(MatmulType, Index, Index, Index, const void*, Index, bool, const void*, Index, bool, void*, Index,
                   bool) {
  throw std::logic_error("onednn_matmul: rnnsearch was built without oneDNN");
}

#endif

}  // namespace rnnsearch

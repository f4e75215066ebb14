#include "rnnsearch/model/guided_alignment.h"

#include <cmath>

#include "rnnsearch/error.h"

namespace rnnsearch {

GuidedAlignmentCost parse_guided_alignment_cost(const std::string& name) {
  if (name == "ce") return GuidedAlignmentCost::ce;
  if (name == "mse") return GuidedAlignmentCost::mse;
  throw Error("--guided-alignment-cost must be ce or mse (got '" + name + "')");
}

const char* guided_alignment_cost_name(GuidedAlignmentCost cost) {
  return cost == GuidedAlignmentCost::ce ? "ce" : "mse";
}

template <class T>
T guided_alignment_cost(const MatCRef<T>& alpha, const Batch& batch, GuidedAlignmentCost kind, T weight, T scale,
                        Mat<T>* dalpha, bool unlinked_to_end) {
  constexpr T kEpsilon = T(1e-6);
  const Index B = batch.size;
  if (dalpha) dalpha->setZero(alpha.rows(), alpha.cols());
  T cost = 0;
  std::vector<int> count;  // links of each target position of a sentence
  for (Index b = 0; b < B; ++b) {
    const int* links = batch.links.data() + 2 * batch.link_starts[b];
    const int links_of_b = batch.link_starts[b + 1] - batch.link_starts[b];
    const Index S_b = batch.src_lengths[b];
    count.assign(static_cast<size_t>(batch.tgt_lengths[b]), 0);
    for (int l = 0; l < links_of_b; ++l) ++count[static_cast<size_t>(links[2 * l + 1])];
    // the cost of row `row` against A_row, which holds a at each of the given source positions
    const auto add_row = [&](Index row, T a, auto&& for_each_linked) {
      if (kind == GuidedAlignmentCost::mse) {
        // ½ Σ_j α_j² over the row, corrected below at the linked j: ½ (α_j − a)² = ½ α_j² − a α_j + ½ a²
        const auto alpha_row = alpha.row(row).head(S_b);
        cost += weight * T(0.5) * alpha_row.squaredNorm();
        if (dalpha) dalpha->row(row).head(S_b) = (scale * weight) * alpha_row;
      }
      for_each_linked([&](Index j) {
        const T alpha_ij = alpha(row, j);
        if (kind == GuidedAlignmentCost::ce) {
          cost -= weight * a * std::log(alpha_ij + kEpsilon);
          if (dalpha) (*dalpha)(row, j) = -scale * weight * a / (alpha_ij + kEpsilon);
        } else {
          cost += weight * (T(0.5) * a * a - a * alpha_ij);
          if (dalpha) (*dalpha)(row, j) -= scale * weight * a;
        }
      });
    };
    // A_ij = 1 / count_i for each link (j, i) of row i, 0 elsewhere; with unlinked_to_end, a
    // row without links of a pair with some is linked to </s> alone (S_b − 1)
    for (Index i = 0; i < batch.tgt_lengths[b]; ++i) {
      const int linked = count[static_cast<size_t>(i)];
      const Index row = i * B + b;
      if (linked > 0) {
        add_row(row, T(1) / static_cast<T>(linked), [&](auto&& link) {
          for (int l = 0; l < links_of_b; ++l)
            if (links[2 * l + 1] == i) link(links[2 * l]);
        });
      } else if (unlinked_to_end && links_of_b > 0) {
        add_row(row, T(1), [&](auto&& link) { link(S_b - 1); });
      }
    }
  }
  return cost;
}

template float guided_alignment_cost<float>(const MatCRef<float>&, const Batch&, GuidedAlignmentCost, float, float,
                                            Mat<float>*, bool);
template double guided_alignment_cost<double>(const MatCRef<double>&, const Batch&, GuidedAlignmentCost, double,
                                              double, Mat<double>*, bool);

}  // namespace rnnsearch

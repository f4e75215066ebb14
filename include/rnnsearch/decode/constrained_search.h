#pragma once
// Constrained search (translate --constraints; the phrases and a hypothesis' state:
// constraints.h): the beam search (beam_search.h) keeps hypotheses that hold every phrase by
// dynamic beam allocation (Post & Vilar 2018). The candidates of a step are the k − f best (as
// without constraints), and for each live hypothesis its best token and every token that takes
// its constraints forward; each candidate's bank is its met count (0 .. C tokens of the
// phrases), and the k − f places are shared among the C + 1 banks (⌊(k − f) / (C + 1)⌋ each,
// the remainder to the highest banks, a bank's places it cannot fill going to the others from
// the highest down), the best candidates of each bank taking them. </s> only follows a
// hypothesis that holds every phrase, and the limit is at least prefix + C + 1 tokens; the
// hypotheses returned are those that hold them all, or, when none does (phrases that cannot
// all be held: cut at the limit), the best of the others.
#include <vector>

namespace rnnsearch {

// The places of a step's candidates among the banks (above), reusing its workspaces.
class BankAllocation {
 public:
  // banks[k]: the bank (0 .. bank_count − 1) of candidate k, the candidates best first; places:
  // how many of them the beam takes. Returns, for each candidate, whether it takes a place.
  const std::vector<char>& allocate(const std::vector<int>& banks, int bank_count, int places);

 private:
  std::vector<int> quota_, available_;
  std::vector<char> taken_;
};

}  // namespace rnnsearch

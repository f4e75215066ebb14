#pragma once
// The learning rate of each update (docs/design.md §4), Marian's schedules:
//
//   lr_t = lr · warmup_t · inv_sqrt_t · decay
//   warmup_t   = min(1, t / W)          --lr-warmup W: linear warm-up (1 when W = 0)
//   inv_sqrt_t = sqrt(D / max(t, D))    --lr-decay-inv-sqrt D: from update D on (1 when D = 0)
//   decay      = F^k                    --lr-decay F: k = the decays so far, one each time
//                                       --lr-decay-stalled S validations in a row did not
//                                       improve (Marian's --lr-decay-strategy stalled
//                                       --lr-decay-start S, Sockeye's plateau-reduce)
//
// t is the 1-based number of the update being taken. warmup_t and inv_sqrt_t depend on t
// alone; decay is kept in progress.json (lr_scale), so a resumed run goes on with the rate
// it stopped at.
namespace rnnsearch {

struct LrSchedule {
  long warmup = 0;         // W; 0 = off
  long inv_sqrt = 0;       // D; 0 = off
  double decay = 0;        // F in (0, 1); 0 = off
  int decay_stalled = 1;   // S
};

// lr_t for update t with the decay factor `decay_scale` (F^k).
double scheduled_lr(double lr, const LrSchedule& schedule, long t, double decay_scale);

// Whether the validation that made `stalled` validations in a row without improvement
// decays the rate (at S, 2S, 3S, ... of them).
bool decays_now(const LrSchedule& schedule, int stalled);

}  // namespace rnnsearch

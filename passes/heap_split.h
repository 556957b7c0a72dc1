// heap split: RS_NLPH and RS_NLH, Ranka-Wang §6 (with §7.2's lambda sweep). The rows of CCOM are
// max-heaps of the bytes still to send, so each rank offers its largest message first; a phase
// is picked as in RS_NLP (Fig. 4: Locate_Pair when pairwise, Check_Path / Mark_Path when
// link-checked). Then M_thresh = the k-th smallest size in the phase (ascending, 1-based, ranks
// that send nothing counted as 0), lambda = k / n: messages up to M_thresh go whole, larger ones
// send M_thresh bytes and their remainder goes back into the heap by its new size. When the k-th
// smallest is a 0 (more than k ranks idle) M_thresh is the smallest size sent in the phase: the
// paper's value would make no progress, and this is its continuation (the (n-k+1)-th largest,
// or the smallest when fewer ranks send). Every phase completes its smallest message, so there
// are at most as many phases as messages.
// lambda is fixed for a whole schedule; the pass tries every k of the sweep (the paper's
// (n-1)/n, (n-2)/n, (n-4)/n, ..., 3/4) and keeps the cheapest under the cost model (by default
// the synchronous one: sum over phases of tau + largest piece / bandwidth); ties keep the larger
// lambda.
// Needs: the fresh CCOM of m (compress), m.ranks <= topology ranks (unless full). Guarantees:
// every phase is a partial permutation of pieces (at most one piece per message and phase),
// pieces of a message are contiguous, in order, and cover it exactly once; with link_check no two
// transfers of a phase share a directed link; local copies are listed.
#pragma once

#include "ir/ccom.h"
#include "ir/cost_model.h"
#include "ir/schedule.h"
#include "ir/topology.h"

#include <functional>
#include <vector>

namespace commfit {

struct HeapSplitOptions {
  bool pairwise = true;       // RS_NLPH; false: RS_NLH
  bool link_check = true;     // Check_Path / Mark_Path (the paper's H variants always check links)
  std::vector<Rank> ks;       // k values (lambda = k / n) to try; empty: paper_lambda_ks(n)
  CostOptions cost;           // for choosing among them
  // Estimated time of a candidate schedule; empty: schedule_estimate_s(s, cost) (ir/cost_model.h),
  // the synchronous model. The paper chose lambda by the time measured on the machine, which behaves loosely
  // synchronously: a critical-path estimate belongs here when the cost model has one.
  std::function<double(const Schedule&)> estimate;
  std::uint64_t seed = 1;     // start rows, as decompose_rs_nlp
};

struct HeapSplitCandidate {
  Rank k = 0;
  double lambda = 0;
  Phase phases = 0;
  std::int64_t pieces = 0;
  double estimate_s = 0;
};

struct HeapSplitReport {
  std::vector<HeapSplitCandidate> sweep;   // in the order tried
  std::size_t chosen = 0;                  // index into sweep
  std::int64_t pairs_located = 0;          // of the chosen schedule
};

Schedule heap_split(const CompressedMatrix& ccom, const CommMatrix& m, const Topology& topo,
                    const HeapSplitOptions& options, HeapSplitReport* report = nullptr);

// The paper's sweep for n ranks: k = n - 1, n - 2, n - 4, ..., while k >= 3n/4 (always n - 1
// when n >= 2). For n = 64: 63, 62, 60, 56, 48.
std::vector<Rank> paper_lambda_ks(Rank n);

}  // namespace commfit

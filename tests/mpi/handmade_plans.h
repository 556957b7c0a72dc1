// Plans built by hand, without the planner, so the executor is tested on shapes the planner may
// never produce: a round-robin plan (phase k: every rank i sends to i + k + 1, pairwise exchanges
// when 2(k + 1) == p) and a two-hop plan that forwards half of each message through an
// intermediary's staging area (several pieces per peer and phase, staged end to end without reuse).
#pragma once

#include "ir/comm_matrix.h"
#include "ir/plan.h"

#include <algorithm>
#include <string>
#include <vector>

namespace commfit::mpitest {

inline Plan empty_plan(const CommMatrix& m, Phase phases, const std::string& strategy) {
  Plan plan;
  plan.manifest.ranks = m.ranks;
  plan.manifest.phases = phases;
  plan.manifest.strategy = strategy;
  plan.manifest.matrix_fingerprint = matrix_fingerprint(m);
  plan.manifest.planner = "handmade (tests/mpi)";
  plan.ranks.resize(m.ranks);
  for (Rank r = 0; r < m.ranks; ++r) {
    RankSchedule& rs = plan.ranks[r];
    rs.rank = r;
    rs.ranks = m.ranks;
    rs.phases = phases;
    rs.matrix_fingerprint = plan.manifest.matrix_fingerprint;
  }
  m.for_each([&](Rank i, Rank j, Bytes b) {
    plan.ranks[i].sends.push_back({j, b});
    plan.ranks[j].recvs.push_back({i, b});
  });
  for (RankSchedule& rs : plan.ranks)
    std::sort(rs.recvs.begin(), rs.recvs.end(), [](const PeerBytes& a, const PeerBytes& b) { return a.peer < b.peer; });
  return plan;
}

inline void add_transfer(Plan& plan, Phase phase, Rank from, Rank to, Rank src, Rank dst, Bytes offset,
                         Bytes bytes, Bytes from_stage = kNoStage, Bytes to_stage = kNoStage) {
  Step s{phase, Op::send, from == src ? Buffer::send : Buffer::stage, to, src, dst, offset, bytes, from_stage};
  Step r{phase, Op::recv, to == dst ? Buffer::recv : Buffer::stage, from, src, dst, offset, bytes, to_stage};
  plan.ranks[from].steps.push_back(s);
  plan.ranks[to].steps.push_back(r);
}

// Steps in order, the staging maximum, and the phase count the steps use (rule 7, passes/verify.h):
// a pattern without network messages leaves the phases of the plan's shape empty.
inline void finish(Plan& plan) {
  Phase used = 0;
  for (RankSchedule& rs : plan.ranks) {
    std::stable_sort(rs.steps.begin(), rs.steps.end(), step_less);
    plan.manifest.staging_bytes_max = std::max(plan.manifest.staging_bytes_max, rs.staging_bytes);
    if (!rs.steps.empty()) used = std::max(used, rs.steps.back().phase + 1);
  }
  plan.manifest.phases = used;
  for (RankSchedule& rs : plan.ranks) rs.phases = used;
}

inline void add_copies(Plan& plan, const CommMatrix& m, Bytes piece = 0) {
  for (Rank r = 0; r < m.ranks; ++r) {
    const Bytes b = m.at(r, r);
    for (Bytes o = 0; o < b;) {   // in pieces of `piece` bytes (0 = whole)
      const Bytes n = piece == 0 ? b : std::min(piece, b - o);
      plan.ranks[r].steps.push_back({0, Op::copy, Buffer::recv, r, r, r, o, n, kNoStage});
      o += n;
    }
  }
}

inline Plan round_robin_plan(const CommMatrix& m) {
  const Rank p = m.ranks;
  Plan plan = empty_plan(m, static_cast<Phase>(std::max(p - 1, 1)), "handmade-round-robin");
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i != j) add_transfer(plan, static_cast<Phase>((j - i + p) % p - 1), i, j, i, j, 0, b);
  });
  add_copies(plan, m);
  finish(plan);
  return plan;
}

// Each message i -> j: the first half direct in phase 0, the rest in phase 1 to an intermediary k
// (staged there) and in phase 2 from k to j. Self messages are copied in two pieces.
inline Plan two_hop_plan(const CommMatrix& m) {
  const Rank p = m.ranks;
  Plan plan = empty_plan(m, 3, "handmade-two-hop");
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i == j) return;
    Rank k = (i + j + 1) % p;
    while (p > 2 && (k == i || k == j)) k = (k + 1) % p;
    const Bytes head = p > 2 ? b / 2 : b;
    if (head > 0) add_transfer(plan, 0, i, j, i, j, 0, head);
    if (head == b) return;
    RankSchedule& mid = plan.ranks[k];
    const Bytes at = mid.staging_bytes;   // end to end: an unused gap would break rule 7 (ir/plan.h)
    mid.staging_bytes = at + (b - head);
    add_transfer(plan, 1, i, k, i, j, head, b - head, kNoStage, at);
    add_transfer(plan, 2, k, j, i, j, head, b - head, at, kNoStage);
  });
  add_copies(plan, m, 700);
  finish(plan);
  return plan;
}

}  // namespace commfit::mpitest

#include "passes/memory_bound.h"

#include "ir/error.h"

#include <algorithm>
#include <vector>

namespace commfit {
namespace {

std::uint64_t ceil_div(Bytes a, Bytes b) { return a / b + (a % b != 0); }

// Dinic's maximum flow on a small graph (capacities are bytes, at most T).
class MaxFlow {
 public:
  explicit MaxFlow(int n) : adj_(static_cast<std::size_t>(n)), level_(adj_.size()), it_(adj_.size()) {}
  void edge(int u, int v, Bytes cap) {
    if (cap == 0) return;
    adj_[u].push_back(static_cast<int>(e_.size()));
    e_.push_back({v, cap});
    adj_[v].push_back(static_cast<int>(e_.size()));
    e_.push_back({u, 0});
  }
  Bytes run(int s, int t) {
    Bytes flow = 0;
    while (bfs(s, t)) {
      std::fill(it_.begin(), it_.end(), 0);
      while (const Bytes f = dfs(s, t, ~Bytes{0})) flow += f;
    }
    return flow;
  }

 private:
  struct E {
    int to;
    Bytes cap;
  };
  bool bfs(int s, int t) {
    std::fill(level_.begin(), level_.end(), -1);
    std::vector<int> queue{s};
    level_[s] = 0;
    for (std::size_t k = 0; k < queue.size(); ++k)
      for (int id : adj_[queue[k]])
        if (e_[id].cap > 0 && level_[e_[id].to] < 0) {
          level_[e_[id].to] = level_[queue[k]] + 1;
          queue.push_back(e_[id].to);
        }
    return level_[t] >= 0;
  }
  Bytes dfs(int u, int t, Bytes f) {
    if (u == t) return f;
    for (std::size_t& k = it_[u]; k < adj_[u].size(); ++k) {
      E& x = e_[adj_[u][k]];
      if (x.cap == 0 || level_[x.to] != level_[u] + 1) continue;
      if (const Bytes got = dfs(x.to, t, std::min(f, x.cap))) {
        x.cap -= got;
        e_[adj_[u][k] ^ 1].cap += got;
        return got;
      }
    }
    return 0;
  }
  std::vector<E> e_;
  std::vector<std::vector<int>> adj_;
  std::vector<int> level_;
  std::vector<std::size_t> it_;
};

// Whether two phases could suffice (a relaxation of it: false means they cannot). In phase 0
// only original data moves: rank i sends out0_i of its own bytes, rank k receives del0_k of its
// own bytes plus park_k parked bytes, del0_k + park_k <= F_k. All its other bytes arrive in phase
// 1, within its free memory then: c_k - del0_k <= F_k + out0_k - del0_k - park_k, so
// out0_k >= c_k - F_k + park_k, and park_k <= F_k + r_k - c_k. Flow: source -> rank i (at least
// max(0, c_i - F_i): capacity exactly that) -> its destinations j (message bytes) or a parking
// pool -> rank k (parking at most min(F_k, F_k + r_k - c_k)) -> sink (F_k). Any 2-phase schedule
// gives a flow that saturates the source edges; a smaller maximum flow rules two phases out.
bool two_phases_possible(const CommMatrix& m, const TrafficStats& st) {
  const Rank p = m.ranks;
  const Bytes T = st.total_bytes;
  const int S = 0, Tk = 1, P = 2;
  auto A = [](Rank i) { return 3 + 2 * i; };
  auto R = [](Rank k) { return 4 + 2 * k; };
  MaxFlow g(3 + 2 * p);
  Bytes need = 0;
  for (Rank k = 0; k < p; ++k) {
    const Bytes F = std::min(m.memory[k], T);
    const Bytes l = st.c[k] > F ? st.c[k] - F : 0;
    need += l;
    g.edge(S, A(k), l);
    g.edge(A(k), P, l);
    const unsigned __int128 final_free = static_cast<unsigned __int128>(F) + st.r[k] - st.c[k];   // feasible: >= 0
    g.edge(P, R(k), final_free < F ? static_cast<Bytes>(final_free) : F);
    g.edge(R(k), Tk, F);
  }
  m.for_each([&](Rank i, Rank j, Bytes b) {
    if (i != j) g.edge(A(i), R(j), b);
  });
  return g.run(S, Tk) == need;
}

}  // namespace

std::string memory_feasibility(const CommMatrix& m) {
  if (m.memory.size() != static_cast<std::size_t>(m.ranks))
    return "no per-rank free memory given (\"memory\" in the matrix, --memory or --memory-file)";
  const TrafficStats st = traffic_stats(m);
  if (st.total_bytes == 0) return {};
  unsigned __int128 total_free = 0;
  for (Rank j = 0; j < m.ranks; ++j) {
    const unsigned __int128 room = static_cast<unsigned __int128>(m.memory[j]) + st.r[j];
    if (st.c[j] > room) {
      const Bytes short_by = static_cast<Bytes>(st.c[j] - room);
      return "rank " + std::to_string(j) + " must receive " + std::to_string(st.c[j]) + " bytes but has only " +
             std::to_string(m.memory[j]) + " bytes free and sends " + std::to_string(st.r[j]) +
             ": after the exchange it would need " + std::to_string(short_by) +
             " bytes more than it has, in any number of phases";
    }
    total_free += m.memory[j];
  }
  if (total_free == 0)
    return "no rank has free memory, so no byte can ever be received (" + std::to_string(st.total_bytes) +
           " bytes to move)";
  return {};
}

MemoryBound memory_lower_bound(const CommMatrix& m) {
  commfit_assert(m.memory.size() == static_cast<std::size_t>(m.ranks), "memory_bound", "no memory limits");
  const TrafficStats st = traffic_stats(m);
  MemoryBound b;
  b.total = st.total_bytes;
  unsigned __int128 memory = 0;
  for (Rank j = 0; j < m.ranks; ++j) {
    memory += m.memory[j];
    if (st.c[j] > m.memory[j]) b.deficit += st.c[j] - m.memory[j];
  }
  // Free memory is user input and may sum past 2^64: clamp (the bounds only get weaker).
  b.memory = memory > ~Bytes{0} ? ~Bytes{0} : static_cast<Bytes>(memory);
  if (b.total == 0) return b;
  commfit_assert(b.memory > 0, "memory_bound", "no free memory (check memory_feasibility first)");
  b.volume_bound = ceil_div(b.total, b.memory);
  b.last_phase_bound = b.deficit ? 1 + ceil_div(b.deficit, b.memory) : 0;
  b.phases = std::max<std::uint64_t>({1, b.volume_bound, b.last_phase_bound});
  if (b.phases == 2 && !two_phases_possible(m, st)) b.two_phase_bound = b.phases = 3;
  return b;
}

}  // namespace commfit

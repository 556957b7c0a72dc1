#include "planner/pass_runner.h"

#include <chrono>

namespace commfit {

std::vector<std::string> lower_and_verify(const Schedule& s, const CommMatrix& m, const MatrixReading& reading, const VerifyRules& rules,
                                          std::uint32_t window, std::span<const std::vector<Rank>> send_order, Manifest& mf,
                                          const std::function<void(RankSchedule&)>& each, double& lower_s, double& verify_s) {
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  Lowering lowering(s, m, reading.columns, reading.fingerprint);
  mf.ranks = m.ranks;
  mf.phases = lowering.phases();
  mf.matrix_fingerprint = lowering.fingerprint();
  mf.staging_bytes_max = 0;
  PlanVerifier verifier(mf, m, rules, &reading.columns, reading.fingerprint);
  RankSchedule rs;
  auto t1 = Clock::now();
  lower_s += std::chrono::duration<double>(t1 - t0).count();
  for (Rank r = 0; r < m.ranks; ++r) {
    lowering.rank(r, rs);
    rs.max_outstanding = window;
    if (!send_order.empty()) rs.send_order = send_order[static_cast<std::size_t>(r)];
    mf.staging_bytes_max = std::max(mf.staging_bytes_max, rs.staging_bytes);
    const auto t2 = Clock::now();
    verifier.add(rs);
    const auto t3 = Clock::now();
    lower_s += std::chrono::duration<double>(t2 - t1).count();
    verify_s += std::chrono::duration<double>(t3 - t2).count();
    if (each) each(rs);
    t1 = Clock::now();
  }
  const auto t4 = Clock::now();
  auto problems = verifier.finish();
  verify_s += std::chrono::duration<double>(Clock::now() - t4).count();
  return problems;
}

std::string format_schedule(const Schedule& s) {
  std::string out = std::to_string(s.ranks) + " ranks, " + std::to_string(s.phases) + " phases, " + std::to_string(s.transfers.size()) +
                    " transfers, " + std::to_string(s.copies.size()) + " local copies\n";
  Phase phase = 0;
  bool first = true;
  for (const Transfer& t : s.transfers) {
    if (first || t.phase != phase) out += "phase " + std::to_string(t.phase) + ":\n";
    first = false;
    phase = t.phase;
    out += "  " + std::to_string(t.from) + " -> " + std::to_string(t.to) + "  piece " + std::to_string(t.piece.src) + "->" +
           std::to_string(t.piece.dst) + " [" + std::to_string(t.piece.offset) + ", " + std::to_string(t.piece.offset + t.piece.bytes) + ")\n";
  }
  return out;
}

}  // namespace commfit

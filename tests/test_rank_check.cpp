// check_rank_schedule (ir/plan.h): one test per fault it finds in one rank's schedule, named after
// the fault. Each fault is checked alone and through the plan directory's reader,
// which refuses format faults with the same place and text and reads rule faults (those are the
// verifier's to name). tests/mpi/test_exec_replay.cpp runs faults through the executor's load.
#include "backends/plan_dir.h"
#include "ir/error.h"
#include "ir/plan.h"
#include "passes/lower.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

using namespace commfit;

namespace {

// 0 -> 3 (1000 B) forwarded through rank 1 in two pieces; 1 -> 2 direct; 2 -> 2 local (as in
// tests/test_verify.cpp). Rank 1 stages, sends from its send buffer and from staging.
Plan fixture_plan() {
  const CommMatrix m = make_matrix(4, {{0, 3, 1000}, {1, 2, 500}, {2, 2, 10}});
  Schedule s;
  s.ranks = 4;
  s.phases = 3;
  s.transfers = {
      {0, 0, 1, {0, 3, 0, 600}},
      {0, 1, 2, {1, 2, 0, 500}},
      {1, 0, 1, {0, 3, 600, 400}},
      {1, 1, 3, {0, 3, 0, 600}},
      {2, 1, 3, {0, 3, 600, 400}},
  };
  s.copies = {{2, 2, 0, 10}};
  return lower(s, m);
}

// Rank r's schedule of the fixture, edited; the first step matching `pick` is passed to `edit`.
RankSchedule edited(Rank r, const std::function<bool(const Step&)>& pick, const std::function<void(Step&)>& edit) {
  RankSchedule rs = fixture_plan().ranks[r];
  for (Step& s : rs.steps)
    if (pick(s)) {
      edit(s);
      return rs;
    }
  FAIL("no step to edit");
  return rs;
}

bool staged_recv(const Step& s) { return s.op == Op::recv && s.buffer == Buffer::stage; }
bool staged_send(const Step& s) { return s.op == Op::send && s.buffer == Buffer::stage; }
bool buffer_send(const Step& s) { return s.op == Op::send && s.buffer == Buffer::send; }
bool buffer_recv(const Step& s) { return s.op == Op::recv && s.buffer == Buffer::recv; }
bool copy(const Step& s) { return s.op == Op::copy; }

// The first problem as "place: what", or "no problem".
std::string alone(const RankSchedule& rs) {
  const auto p = check_rank_schedule(rs);
  return p.empty() ? "no problem" : p[0].place + ": " + p[0].what;
}
int rule(const RankSchedule& rs) {
  const auto p = check_rank_schedule(rs);
  return p.empty() ? -1 : p[0].rule;
}

// The schedule written as its rank file and read back.
std::string read_back(const RankSchedule& rs) {
  try {
    parse_rank_schedule(rank_schedule_json(rs), "r.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// A format fault: found alone, and the reader refuses it with the same place and text.
void format_fault(const RankSchedule& rs, const std::string& expect) {
  CHECK(alone(rs) == expect);
  CHECK(rule(rs) == 0);
  CHECK(read_back(rs) == "r.json: " + expect);
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("rank_check_accepts_lowered_schedules") {
  for (const RankSchedule& rs : fixture_plan().ranks) {
    CHECK(alone(rs) == "no problem");
    CHECK(read_back(rs) == "no error");
  }
}

TEST_CASE("rank_out_of_range") {
  RankSchedule rs = fixture_plan().ranks[1];
  rs.rank = 4;
  CHECK(alone(rs) == "/rank: rank 4 is out of range (ranks = 4)");
}

TEST_CASE("peers_out_of_order") {
  RankSchedule rs = fixture_plan().ranks[3];
  rs.recvs = {{1, 5}, {0, 1000}};
  format_fault(rs, "/recvs/1/0: peers must be listed in increasing order");
}

TEST_CASE("peer_out_of_range_in_list") {
  RankSchedule rs = fixture_plan().ranks[3];
  rs.recvs[0].peer = 7;
  CHECK(alone(rs) == "/recvs/0/0: peer 7 is out of range (ranks = 4)");
  CHECK(read_back(rs) == "r.json: /recvs/0/0: 7 is out of range (at most 3)");   // the field's own bound
}

TEST_CASE("zero_entry_listed") {
  RankSchedule rs = fixture_plan().ranks[3];
  rs.recvs.push_back({2, 0});
  format_fault(rs, "/recvs/1/1: zero entries are not listed");
}

TEST_CASE("self_message_differs") {
  RankSchedule rs = fixture_plan().ranks[2];
  rs.recvs.back().bytes = 11;   // 2 -> 2: 10 bytes in sends
  format_fault(rs, "/recvs: the self message has 10 bytes in sends but 11 in recvs");
}

TEST_CASE("steps_out_of_order") {
  RankSchedule rs = fixture_plan().ranks[1];
  std::swap(rs.steps.front(), rs.steps.back());
  format_fault(rs, "/steps/1: steps are not in phase order (receives, then sends, then copies)");
}

TEST_CASE("phase_out_of_range") {
  RankSchedule rs = fixture_plan().ranks[3];
  rs.steps.back().phase = 3;
  format_fault(rs, "/steps/" + std::to_string(rs.steps.size() - 1) + "/phase: phase 3 is not below the phase count 3");
}

TEST_CASE("step_peer_out_of_range") {
  const RankSchedule rs = edited(1, buffer_send, [](Step& s) { s.peer = 4; });
  CHECK(contains(alone(rs), "/peer: peer 4 is out of range (ranks = 4)"));
  CHECK(contains(read_back(rs), "/peer: 4 is out of range (at most 3)"));
}

TEST_CASE("empty_step") {
  const RankSchedule rs = edited(3, buffer_recv, [](Step& s) { s.bytes = 0; });
  format_fault(rs, "/steps/0/bytes: a step moves at least one byte");
}

TEST_CASE("copy_of_another_rank") {
  const RankSchedule rs = edited(2, copy, [](Step& s) { s.dst = 3; });
  CHECK(contains(alone(rs), ": a copy step must have peer == src == dst == this rank"));
  CHECK(contains(read_back(rs), ": a copy step must have peer == src == dst == this rank"));
}

TEST_CASE("copy_into_staging") {
  const RankSchedule rs = edited(2, copy, [](Step& s) { s.buffer = Buffer::stage; s.stage_offset = 0; });
  CHECK(contains(alone(rs), "/buffer: a copy copies the self message into the receive buffer"));
}

TEST_CASE("send_to_self") {
  const RankSchedule rs = edited(1, buffer_send, [](Step& s) { s.peer = 1; });
  CHECK(contains(alone(rs), "/peer: a rank does not send to itself (use a copy step)"));
}

TEST_CASE("receive_from_self") {
  const RankSchedule rs = edited(3, buffer_recv, [](Step& s) { s.peer = 3; });
  format_fault(rs, "/steps/0/peer: a rank does not receive from itself (use a copy step)");
}

TEST_CASE("send_from_send_buffer_of_another_rank") {
  const RankSchedule rs = edited(1, staged_send, [](Step& s) { s.buffer = Buffer::send; s.stage_offset = kNoStage; });
  CHECK(contains(alone(rs), "/src: only the message's src sends from its send buffer"));
}

TEST_CASE("receive_into_send_buffer") {
  const RankSchedule rs = edited(3, buffer_recv, [](Step& s) { s.buffer = Buffer::send; });
  format_fault(rs, "/steps/0/buffer: only the message's src sends from its send buffer");
}

TEST_CASE("send_reads_receive_buffer") {
  const RankSchedule rs = edited(1, buffer_send, [](Step& s) { s.buffer = Buffer::recv; });
  CHECK(contains(alone(rs), "/buffer: a send cannot read the receive buffer"));
}

TEST_CASE("receive_into_receive_buffer_of_another_rank") {
  const RankSchedule rs = edited(1, staged_recv, [](Step& s) { s.buffer = Buffer::recv; s.stage_offset = kNoStage; });
  CHECK(contains(alone(rs), "/dst: only the message's dst receives into its receive buffer"));
}

TEST_CASE("piece_outside_message") {
  const RankSchedule rs = edited(1, buffer_send, [](Step& s) { s.offset = 1; });
  CHECK(contains(alone(rs), ": bytes [1, 501) of message 1 -> 2 lie outside the message (500 bytes)"));
  CHECK(contains(read_back(rs), ": bytes [1, 501) of message 1 -> 2 lie outside the message (500 bytes)"));
}

TEST_CASE("staging_range_outside_staging_bytes") {
  RankSchedule rs = fixture_plan().ranks[1];
  rs.staging_bytes -= 1;
  const std::string got = alone(rs);
  CHECK(contains(got, "/stage_offset: staging range ["));
  CHECK(contains(got, "lies outside the rank's " + std::to_string(rs.staging_bytes) + " staging bytes"));
  CHECK(read_back(rs) != "no error");
}

TEST_CASE("staged_step_without_stage_offset") {
  const RankSchedule rs = edited(1, staged_recv, [](Step& s) { s.stage_offset = kNoStage; });
  CHECK(contains(alone(rs), ": a step with buffer \"stage\" needs a stage_offset"));
}

TEST_CASE("stage_offset_on_unstaged_step") {
  const RankSchedule rs = edited(3, buffer_recv, [](Step& s) { s.stage_offset = 0; });
  CHECK(alone(rs) == "/steps/0/stage_offset: only steps with buffer \"stage\" have a stage_offset");
}

// Rule faults: the reader reads them (the verifier names the rule); the executor refuses them.
TEST_CASE("bytes_never_received") {
  const RankSchedule rs = edited(3, buffer_recv, [](Step& s) { s.bytes -= 1; });
  CHECK(rule(rs) == 1);
  CHECK(contains(alone(rs), "/recvs: bytes ["));
  CHECK(contains(alone(rs), "of message 0 -> 3 are never received"));
  CHECK(read_back(rs) == "no error");
}

TEST_CASE("bytes_sent_twice") {
  RankSchedule rs = fixture_plan().ranks[1];
  Step twice = *std::find_if(rs.steps.begin(), rs.steps.end(), buffer_send);
  twice.phase = 2;
  rs.steps.push_back(twice);
  std::stable_sort(rs.steps.begin(), rs.steps.end(), step_less);
  CHECK(rule(rs) == 1);
  CHECK(alone(rs) == "/sends: bytes [0, 500) of message 1 -> 2 are sent twice");
  CHECK(read_back(rs) == "no error");
}

TEST_CASE("bytes_never_sent") {
  const RankSchedule rs = edited(1, buffer_send, [](Step& s) { s.offset = 1, s.bytes = 499; });
  CHECK(alone(rs) == "/sends: bytes [0, 1) of message 1 -> 2 are never sent");
}

TEST_CASE("staged_send_before_arrival") {
  RankSchedule rs = fixture_plan().ranks[1];
  for (Step& s : rs.steps)
    if (staged_send(s) && s.phase == 1) s.phase = 0;   // forwards [0, 600) in the phase it arrives
  std::stable_sort(rs.steps.begin(), rs.steps.end(), step_less);
  CHECK(rule(rs) == 2);
  CHECK(contains(alone(rs), ": phase 0 sends bytes [0, 600) of 0->3 from staging offset 0, which it does not hold from an earlier phase"));
  CHECK(read_back(rs) == "no error");
}

TEST_CASE("staging_overlap") {
  const RankSchedule rs = edited(1, [](const Step& s) { return staged_recv(s) && s.phase == 1; }, [](Step& s) { s.stage_offset = 100; });
  CHECK(rule(rs) == 6);
  CHECK(contains(alone(rs), ": phase 1: staging range [100, 500) overlaps a live staged piece"));
  CHECK(read_back(rs) == "no error");
}

TEST_CASE("staged_bytes_never_forwarded") {
  RankSchedule rs = fixture_plan().ranks[1];
  rs.steps.erase(std::find_if(rs.steps.begin(), rs.steps.end(), [](const Step& s) { return staged_send(s) && s.phase == 2; }));
  CHECK(rule(rs) == 2);
  CHECK(contains(alone(rs), ": bytes [600, 1000) of 0->3 staged at offset "));
  CHECK(contains(alone(rs), " are never forwarded (400 bytes left)"));
}

// Rule 7: the staging area is what the staged steps use. Rank 1 of the fixture stages 600 + 400
// bytes in [0, 1000).
TEST_CASE("staging_bytes_beyond_the_steps") {
  RankSchedule rs = fixture_plan().ranks[1];
  REQUIRE(rs.staging_bytes == 1000);
  rs.staging_bytes = Bytes{3} << 30;
  CHECK(rule(rs) == 7);
  CHECK(alone(rs) == "/staging_bytes: staging_bytes 3221225472 but the steps use at most 1000");
  CHECK(read_back(rs) == "no error");
  rs = fixture_plan().ranks[3];   // stages nothing
  rs.staging_bytes = 1;
  CHECK(alone(rs) == "/staging_bytes: staging_bytes 1 but the steps use at most 0");
}

TEST_CASE("staging_with_gaps") {
  // The second piece and its forward moved far up, staging_bytes with them: every range is inside,
  // nothing overlaps, but the area would be mostly unused.
  RankSchedule rs = fixture_plan().ranks[1];
  for (Step& s : rs.steps)
    if (s.buffer == Buffer::stage && s.offset == 600) s.stage_offset = (Bytes{3} << 30) - 400;
  rs.staging_bytes = Bytes{3} << 30;
  CHECK(rule(rs) == 7);
  CHECK(alone(rs) == "/staging_bytes: staging_bytes 3221225472 but the staged receives bring only 1000 bytes (the staged ranges leave gaps)");
  CHECK(read_back(rs) == "no error");
}

TEST_CASE("rank_check_collects_up_to_the_cap") {
  RankSchedule rs = fixture_plan().ranks[3];
  for (Step& s : rs.steps) s.phase = 9;
  CHECK(check_rank_schedule(rs).size() == 1);
  CHECK(check_rank_schedule(rs, {true, true, 10}).size() == rs.steps.size());
}

// Machine files (planner/machine_file.h): what a file sets, what an explicit option keeps, the line
// the plan's summary prints, and the command line's and in-job planning's readings of one. The
// fixtures' verdicts against the schema are in test_schemas.cpp.
#include "planner/machine_file.h"

#include "ir/error.h"
#include "ir/plan_contract.h"
#include "planner/plan_option.h"
#include "support/run_command.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using commfit::test::run_commfit;
using commfit::test::scratch_dir;
using commfit::test::slurp;

using commfit::test::source_dir;

constexpr const char* kIb = R"({"format": "commfit-machine", "version": 1, "name": "test ib", "network": "ib", "tau_s": 3e-6,
  "bandwidth_Bps": 1.2e10, "overhead_s": 6e-7, "eager_limit": 8192, "ib_factors": "0.9;0.8;1.5", "intra_latency_s": 3e-7,
  "intra_bandwidth_Bps": 9e9, "cores_per_node": 2, "rendezvous_s": 2e-6})";

fs::path write(const std::string& name, const std::string& text) {
  const fs::path p = scratch_dir("machine") / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST_CASE("a machine file sets every figure it has, and an explicit option keeps its own") {
  const commfit::MachineFile m = commfit::parse_machine_file(kIb, "m.json");
  CHECK(m.name == "test ib");
  commfit::PlanOptions o;
  commfit::apply_machine_file(m, o, {});
  CHECK(o.cost.tau_s == 3e-6);
  CHECK(o.cost.bandwidth_Bps == 1.2e10);
  CHECK(o.cost.network.model == commfit::Network::ib);
  CHECK(o.cost.network.overhead_s == 6e-7);
  CHECK(o.cost.network.eager_limit == 8192);
  CHECK(o.cost.network.ib.ys == 1.5);
  CHECK(o.cost.network.intra_latency_s == 3e-7);
  CHECK(o.cost.network.intra_bandwidth_Bps == 9e9);
  CHECK(o.cost.network.cores_per_node == 2);
  CHECK(o.cost.network.rendezvous_s == 2e-6);
  CHECK(o.machine == "m.json (test ib)");

  commfit::PlanOptions kept;
  kept.cost.tau_s = 1e-6;
  kept.cost.network.eager_limit = 100;
  const std::vector<std::string> given = {"tau", "eager-limit"};
  commfit::apply_machine_file(m, kept, given);
  CHECK(kept.cost.tau_s == 1e-6);
  CHECK(kept.cost.network.eager_limit == 100);
  CHECK(kept.cost.bandwidth_Bps == 1.2e10);

  // A field the file leaves out keeps what the options had.
  commfit::PlanOptions partial;
  partial.cost.bandwidth_Bps = 5e9;
  commfit::apply_machine_file(commfit::parse_machine_file(R"({"format": "commfit-machine", "version": 1, "tau_s": 4e-6})", "p.json"), partial, {});
  CHECK(partial.cost.tau_s == 4e-6);
  CHECK(partial.cost.bandwidth_Bps == 5e9);
  CHECK(partial.machine == "p.json");
}

TEST_CASE("the machine line says where the figures came from and what they are") {
  commfit::PlanOptions o;
  CHECK(commfit::machine_line(o) == "machine: defaults: network flow, tau 2 µs, bandwidth 10 GB/s, overhead 0.5 µs, eager limit 64.0 KiB");
  commfit::apply_machine_file(commfit::parse_machine_file(kIb, "m.json"), o, {});
  o.topology = commfit::Topology::parse("full+node4");
  CHECK(commfit::machine_line(o) ==
        "machine m.json (test ib): network ib, tau 3 µs, bandwidth 12 GB/s, overhead 0.6 µs, eager limit 8.0 KiB (then a rendezvous of "
        "2 µs), IB factors 0.9;0.8;1.5, "
        "intra-node 0.3 µs at 9 GB/s, 4 ranks on 2 cores a node");
  // As many cores as ranks: nothing to say.
  o.topology = commfit::Topology::parse("full+node2");
  CHECK(commfit::machine_line(o).ends_with("intra-node 0.3 µs at 9 GB/s"));
}

TEST_CASE("a machine file that cannot be read is one error naming it") {
  const fs::path dir = scratch_dir("machine");
  auto refusal = [](const std::string& path) {
    try {
      commfit::read_machine_file(path);
    } catch (const commfit::InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refusal((dir / "missing.json").string()).find("missing.json") != std::string::npos);
  CHECK(refusal(dir.string()) == dir.string() + ": is a directory, not a file");
  // Larger than a machine file can be (16 MiB): refused before it is parsed.
  const fs::path big = write("big.json", std::string(17u << 20, ' '));
  CHECK(refusal(big.string()) == big.string() + ": file is 17825792 bytes, over the limit of 16777216");
}

TEST_CASE("plan and compare --machine: the figures, the summary line, the manifest, and explicit options first") {
  const fs::path dir = scratch_dir("machine-cli");
  const fs::path m = write("ib.json", kIb);
  const std::string matrix = (source_dir() / "examples/stencil2d_16.json").string();
  const auto run = commfit::test::run_commfit("plan " + matrix + " -o a.plan --machine " + m.string() + " --tau 2us", dir, dir);
  REQUIRE(run.status == 0);
  CHECK(run.out.find("  machine " + m.string() + " (test ib): network ib, tau 2 µs, bandwidth 12 GB/s") != std::string::npos);
  const auto manifest = nlohmann::ordered_json::parse(slurp(dir / "a.plan/manifest.json"));
  CHECK(manifest["options"]["machine"] == m.string() + " (test ib)");
  CHECK(manifest["options"]["tau_s"] == 2e-6);
  CHECK(manifest["options"]["network"] == "ib");
  CHECK(manifest["options"]["ib_factors"] == "0.9;0.8;1.5");
  CHECK(manifest["cost"]["bandwidth_Bps"] == 1.2e10);
  // --network given: the file's model is not taken, nor are its IB factors of use.
  const auto flow = commfit::test::run_commfit("plan " + matrix + " -o b.plan --machine " + m.string() + " --network flow", dir, dir);
  REQUIRE(flow.status == 0);
  CHECK(flow.out.find("network flow, tau 3 µs") != std::string::npos);
  // compare prices every candidate with the file's figures.
  const auto cmp = commfit::test::run_commfit("compare " + matrix + " --json --machine " + m.string(), dir, dir);
  REQUIRE(cmp.status == 0);
  const auto j = nlohmann::ordered_json::parse(cmp.out);
  CHECK(j["network"] == "ib");
  CHECK(j["tau_s"] == 3e-6);
  // A bad file: exit 2, one line naming the file, the field and the problem, and no plan written.
  const fs::path bad = write("bad.json", R"({"format": "commfit-machine", "version": 1, "tau_s": 1e-6, "overhead_s": 9e-7})");
  const auto refused = commfit::test::run_commfit("plan " + matrix + " -o c.plan --machine " + bad.string(), dir, dir);
  CHECK(refused.status == 2);
  CHECK(refused.err == "commfit: error: " + bad.string() + ": /overhead_s: an overhead of 0.9 µs is above half of tau_s (1 µs): tau is the "
                                                            "latency plus both ends' overheads\n");
  CHECK_FALSE(fs::exists(dir / "c.plan"));
}

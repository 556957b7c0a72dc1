// Compares Topology::route with SimGrid 3.32's own routes (docs/TOPOLOGY.md "Matching SimGrid").
// For each case a platform with one FAT_TREE (or TORUS, or DRAGONFLY) cluster is written, loaded into a SimGrid
// engine, and for every ordered host pair a != b the route SimGrid gives (Host::route_to) is
// compared link by link with ours:
//  - same length;
//  - the same link at the same place: SimGrid's link names map one-to-one onto our link ids
//    (so two pairs share a link in SimGrid exactly when they share one in ours: the link rule);
//  - our link_name is SimGrid's name (without the cluster's prefix, if any), and its bandwidth is
//    the cluster's times our link_width.
// SimGrid numbers fat-tree hosts and cables with process-wide counters, so each case runs in its
// own process: without arguments the program runs itself once per case.
#include "ir/error.h"
#include "ir/topology.h"

#include <simgrid/s4u.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Case {
  const char* name;
  const char* spec;        // ours
  const char* simgrid;     // topology attribute
  const char* params;      // topo_parameters
};

const Case kCases[] = {
    {"fattree-2-4x4-up1x2-par1x2", "fattree:2;4,4;1,2;1,2", "FAT_TREE", "2;4,4;1,2;1,2"},
    {"fattree-2-16x16-up1x16", "fattree:2;16,16;1,16;1,1", "FAT_TREE", "2;16,16;1,16;1,1"},
    {"fattree-2-16x16-up1x8-tapered", "fattree:2;16,16;1,8;1,1", "FAT_TREE", "2;16,16;1,8;1,1"},
    {"fattree-3-4x4x4-up1x2x2", "fattree:3;4,4,4;1,2,2;1,1,1", "FAT_TREE", "3;4,4,4;1,2,2;1,1,1"},
    {"fattree-3-2x3x2-up2x2x3-par2x1x2", "fattree:3;2,3,2;2,2,3;2,1,2", "FAT_TREE", "3;2,3,2;2,2,3;2,1,2"},
    {"fattree-1-8-up1-par3", "fattree:1;8;1;3", "FAT_TREE", "1;8;1;3"},
    {"fattree-2-4x4-up2x2-par2x2", "fattree:2;4,4;2,2;2,2", "FAT_TREE", "2;4,4;2,2;2,2"},
    {"fattree-3-2x2x2-up2x2x2-par2x2x2", "fattree:3;2,2,2;2,2,2;2,2,2", "FAT_TREE", "3;2,2,2;2,2,2;2,2,2"},
    {"fattree-3-3x2x2-up2x3x1-par1x2x3", "fattree:3;3,2,2;2,3,1;1,2,3", "FAT_TREE", "3;3,2,2;2,3,1;1,2,3"},
    {"fattree-3-8x8x8-up1x8x8", "fattree:3;8,8,8;1,8,8;1,1,1", "FAT_TREE", "3;8,8,8;1,8,8;1,1,1"},
    {"torus-4x4", "torus:4x4", "TORUS", "4,4"},
    {"torus-5x2x3", "torus:5x2x3", "TORUS", "5,2,3"},
    {"torus-8x8x4", "torus:8x8x4", "TORUS", "8,8,4"},
    {"dragonfly-16", "dragonfly:2,1;2,1;2,1;2", "DRAGONFLY", "2,1;2,1;2,1;2"},
    {"dragonfly-64", "dragonfly:2,2;2,2;4,2;4", "DRAGONFLY", "2,2;2,2;4,2;4"},
    {"dragonfly-3x3x3x2", "dragonfly:3,1;3,2;3,3;2", "DRAGONFLY", "3,1;3,2;3,3;2"},
    {"dragonfly-1-group", "dragonfly:1,1;3,2;2,1;2", "DRAGONFLY", "1,1;3,2;2,1;2"},
    {"dragonfly-256", "dragonfly:4,8;4,2;4,2;4", "DRAGONFLY", "4,8;4,2;4,2;4"},
};

int run_case(const Case& c) {
  const commfit::Topology topo = commfit::Topology::parse(c.spec);
  const commfit::Rank n = topo.ranks();
  const std::string platform = "commfit_routes_" + std::string(c.name) + "_" + std::to_string(getpid()) + ".xml";
  {
    std::ofstream out(platform);
    out << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        << "<platform version=\"4.1\">\n"
        << "  <cluster id=\"c\" prefix=\"h\" suffix=\"\" radical=\"0-" << n - 1
        << "\" speed=\"1Gf\" bw=\"10GBps\" lat=\"1us\" topology=\"" << c.simgrid << "\" topo_parameters=\""
        << c.params << "\" sharing_policy=\"SPLITDUPLEX\"/>\n</platform>\n";
  }
  int argc = 2;
  char arg0[] = "test_fattree_routes";
  char arg1[] = "--log=root.thresh:critical";
  char* args[] = {arg0, arg1, nullptr};
  simgrid::s4u::Engine engine(&argc, args);
  engine.load_platform(platform);
  std::remove(platform.c_str());

  std::vector<simgrid::s4u::Host*> hosts(n);
  for (commfit::Rank r = 0; r < n; ++r) hosts[r] = engine.host_by_name("h" + std::to_string(r));

  std::map<std::string, commfit::Link> ours_of;      // SimGrid link name -> our id
  std::map<commfit::Link, std::string> simgrid_of;   // our id -> SimGrid link name
  std::vector<simgrid::s4u::Link*> sg;
  std::vector<commfit::Link> mine;
  long problems = 0, hops = 0;
  auto report = [&](commfit::Rank a, commfit::Rank b, const std::string& what) {
    if (++problems <= 10) std::printf("  %s: route %d -> %d: %s\n", c.name, a, b, what.c_str());
  };
  for (commfit::Rank a = 0; a < n; ++a)
    for (commfit::Rank b = 0; b < n; ++b) {
      if (a == b) continue;
      sg.clear();
      double latency = 0;
      hosts[a]->route_to(hosts[b], sg, &latency);
      topo.route(a, b, mine);
      if (sg.size() != mine.size()) {
        report(a, b, "SimGrid has " + std::to_string(sg.size()) + " links, ours " + std::to_string(mine.size()));
        continue;
      }
      for (std::size_t k = 0; k < sg.size(); ++k) {
        ++hops;
        const std::string& name = sg[k]->get_name();
        const auto [it, fresh] = ours_of.emplace(name, mine[k]);
        const auto [jt, fresh2] = simgrid_of.emplace(mine[k], name);
        if (it->second != mine[k] || jt->second != name)
          report(a, b, "hop " + std::to_string(k) + ": SimGrid link " + name + " is our link " +
                           std::to_string(mine[k].value()) + " here but not elsewhere");
        // Our names are SimGrid's, up to a cluster prefix ("c_" for tori).
        const std::string ours = topo.link_name(mine[k]);
        if (name != ours && name != "c_" + ours) report(a, b, "SimGrid names " + name + ", we name " + ours);
        // And so is the bandwidth: the cluster's 10 GBps times our width (a dragonfly's bundles).
        if (sg[k]->get_bandwidth() != 1e10 * topo.link_width(mine[k]))
          report(a, b, "SimGrid's link " + name + " has " + std::to_string(sg[k]->get_bandwidth()) + " B/s, ours width " +
                           std::to_string(topo.link_width(mine[k])));
      }
    }
  std::printf("%-34s %-30s %5d hosts %7ld pairs %8ld hops %6zu links: %s\n", c.name, c.spec, n,
              static_cast<long>(n) * (n - 1), hops, ours_of.size(), problems ? "DIFFERENT" : "identical");
  return problems ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2) {
    for (const Case& c : kCases)
      if (argv[1] == std::string(c.name)) return run_case(c);
    std::fprintf(stderr, "unknown case %s\n", argv[1]);
    return 2;
  }
  // One process per case.
  int failed = 0;
  for (const Case& c : kCases) {
    char* args[] = {argv[0], const_cast<char*>(c.name), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, args, environ) != 0) {
      std::fprintf(stderr, "cannot run case %s\n", c.name);
      return 1;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("FAILED: %s\n", c.name);
      ++failed;
    }
  }
  std::printf("%s: %d of %zu cases differ from SimGrid\n", failed ? "FAIL" : "OK", failed, std::size(kCases));
  return failed ? 1 : 0;
}

// commfit-calibrate: measures the machine a job runs on and writes a machine file
// (docs/FORMAT.md §5.1) that planning reads in place of the defaults (docs/GUIDE.md "Calibrating").
//
//   mpirun -np N [--map-by ...] commfit-calibrate -o machine.json [--blocks 9] [--name TEXT] [--quick]
//
// What it measures, each as the median of `blocks` timed blocks (their spread is recorded too):
//  - the node structure (MPI_Comm_split_type SHARED), and the cores of a node (its cgroup's CPUs;
//    not under SimGrid);
//  - ping-pong between rank 0 and a rank of its node, and between rank 0 and another node's first
//    rank (of up to 16 nodes sampled with 8 bytes, the one at the median: routes differ in length):
//    half the round trip per size, 8 B to 4 MiB; with --topology, 1 MiB to the node farthest from
//    rank 0, and 1 MiB from it and from the nearest node into rank 0 at once;
//  - the CPU time of posting a send (MPI_Isend of 8 B, 64 in a row, before any completes);
//  - concurrent flows of 1 MiB between nodes (their first ranks), k = 1, 2, 4, ... up to 32: k into
//    rank 0 (incast), k out of it (outcast), and k senders each sending to rank 0 and to a receiver
//    of its own (hot): the time until the last byte arrived;
//  - an 8-byte MPI_Allreduce over every rank.
// What it fits (planner/calibration.h): tau and the bandwidth between nodes from the ping-pong's
// small and large messages, the eager limit where the curve breaks (and the rendezvous's handshake
// where the large messages' line starts late), the overhead from the posting,
// the intra-node latency and bandwidth from the node's ping-pong; with --topology the latency per
// link from the sampled routes' lengths, and a window bound from the longest route's rate when it
// is below the others' (SimGrid's TCP-gamma; NetworkOptions::window_bytes), and whether flows that
// share a link share it equally or by route latency (rtt_weight_bytes 0); then whether the flow model or
// the InfiniBand model (with its penalty factors fitted by simulating the same trials) reproduces
// the flows better. Every fit's largest relative error against its own measurements is printed
// and kept in the file's "calibration" object. On one node there is no network: tau and the
// bandwidth are shared memory's, and no flow model is fitted.
#include "backends/atomic_output.h"
#include "ir/error.h"
#include "ir/human_units.h"
#include "ir/network_sim.h"
#include "planner/calibration.h"
#include "planner/machine_file.h"

// SimGrid's smpicxx (bench/smpi/calibrate.sh) includes a header of its own first, which defines
// exit() as a macro; CLI11 has a member of that name. This program calls no exit().
#ifdef exit
#undef exit
#endif
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using commfit::Bytes;
using json = nlohmann::ordered_json;

struct Settings {
  std::string output = "machine.json";
  std::string name;
  std::string topology;   // the machine's, for pricing the flow trials where they ran ("": a crossbar)
  int blocks = 9;
  bool quick = false;
};

// The median and the spread ((largest - smallest) / median) of a block's times.
struct Sample {
  double median = 0, spread = 0;
};
Sample summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {median, median > 0 ? (v.back() - v.front()) / median : 0};
}

// Iterations that make a block about 5 ms (2 ms quick) for an operation of `guess` seconds.
int iterations_for(double guess, const Settings& s) {
  const double block = s.quick ? 2e-3 : 5e-3;
  return std::clamp(static_cast<int>(block / std::max(guess, 1e-7)), 2, 10000);
}

// A barrier over MPI_COMM_WORLD at which a rank with nothing to measure next (`idle`) sleeps rather
// than polls: on a node with fewer cores than ranks, waiting ranks that spin would take the cores
// of the pair being measured.
void barrier(bool idle) {
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &r);
  if (!idle) {
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    return;
  }
  for (int done = 0;;) {
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (done) return;
    usleep(200);
  }
}

// Ping-pong between ranks a and b of MPI_COMM_WORLD (the others wait at the barriers): half the
// round trip of `bytes`, per block. Every rank calls it; rank 0's result is the one used.
Sample ping_pong(int a, int b, Bytes bytes, const Settings& s, int rank) {
  std::vector<char> buf(static_cast<std::size_t>(bytes), 1);
  const int n = static_cast<int>(bytes);
  auto round = [&](int iters) {
    for (int k = 0; k < iters; ++k) {
      if (rank == a) {
        MPI_Send(buf.data(), n, MPI_BYTE, b, 0, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), n, MPI_BYTE, b, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == b) {
        MPI_Recv(buf.data(), n, MPI_BYTE, a, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), n, MPI_BYTE, a, 0, MPI_COMM_WORLD);
      }
    }
  };
  // A first round pays the connection; its time (shared by a with everyone) sizes the blocks.
  barrier(rank != a && rank != b);
  double t = MPI_Wtime();
  round(2);
  double guess = (MPI_Wtime() - t) / 4;
  MPI_Bcast(&guess, 1, MPI_DOUBLE, a, MPI_COMM_WORLD);
  const int iters = iterations_for(2 * guess, s);
  std::vector<double> times;
  for (int k = 0; k < s.blocks; ++k) {
    barrier(rank != a && rank != b);
    t = MPI_Wtime();
    round(iters);
    times.push_back((MPI_Wtime() - t) / (2.0 * iters));
  }
  Sample out = summarise(times);
  MPI_Bcast(&out, 2, MPI_DOUBLE, a, MPI_COMM_WORLD);
  return out;
}

// The CPU time of posting one 8-byte MPI_Isend from a to b, 64 in a row (b's receives posted first).
Sample posting(int a, int b, const Settings& s, int rank) {
  constexpr int kPosts = 64;
  std::vector<char> buf(8 * kPosts, 1);
  std::vector<MPI_Request> req(kPosts, MPI_REQUEST_NULL);
  std::vector<double> times;
  for (int k = 0; k < s.blocks * 4; ++k) {
    if (rank == b)
      for (int j = 0; j < kPosts; ++j) MPI_Irecv(&buf[8 * j], 8, MPI_BYTE, a, 1, MPI_COMM_WORLD, &req[j]);
    barrier(rank != a && rank != b);
    if (rank == a) {
      const double t = MPI_Wtime();
      for (int j = 0; j < kPosts; ++j) MPI_Isend(&buf[8 * j], 8, MPI_BYTE, b, 1, MPI_COMM_WORLD, &req[j]);
      times.push_back((MPI_Wtime() - t) / kPosts);
    }
    if (rank == a || rank == b) MPI_Waitall(kPosts, req.data(), MPI_STATUSES_IGNORE);
  }
  Sample out = rank == a ? summarise(times) : Sample{};
  MPI_Bcast(&out, 2, MPI_DOUBLE, a, MPI_COMM_WORLD);
  return out;
}

// A trial's flows at once (planner/calibration.h: its node j is world rank `ends[j - 1]`, node 0
// rank 0): every rank posts its receives and sends, from a barrier until the last participant is
// done, the slowest's time, per block (after one that pays the connections). Where a node is left
// over, its rank gathers the times: a participant done reports to it alone, and hears the slowest
// time once all are done. So no message reaches a node with flows still under way: under
// SimGrid's InfiniBand model a message that did would renew their penalties, which the model of
// the trial (the flows alone) keeps as they were (ir/ib_penalties.h).
Sample flows(const std::vector<int>& ends, const commfit::FlowTrial& trial, const Settings& s, int rank) {
  auto world = [&](int node) { return node == 0 ? 0 : ends[static_cast<std::size_t>(node - 1)]; };
  const int k = trial.flows, n = static_cast<int>(trial.bytes);
  struct Flow {
    int from, to, bytes;
  };
  std::vector<Flow> pairs;   // as world ranks
  for (int r = 1; r <= k; ++r) {
    if (trial.kind == commfit::FlowKind::outcast) pairs.push_back({world(0), world(r), n});
    else pairs.push_back({world(r), world(0), n});
    if (trial.kind == commfit::FlowKind::hot) pairs.push_back({world(r), world(r + k), n * k});
  }
  struct Mine {
    int peer, bytes;
    bool sending;
    std::size_t at;
  };
  std::vector<Mine> mine;
  std::size_t total = 0;
  for (const Flow& f : pairs)
    if (f.from == rank || f.to == rank) {
      mine.push_back({f.from == rank ? f.to : f.from, f.bytes, f.from == rank, total});
      total += static_cast<std::size_t>(f.bytes);
    }
  std::vector<char> buf(total, 1);
  std::vector<MPI_Request> req(mine.size(), MPI_REQUEST_NULL);
  std::vector<double> times;
  const int used = commfit::trial_ends(trial);   // nodes 1 .. used
  const int gatherer = used < static_cast<int>(ends.size()) ? world(used + 1) : -1;
  const int participants = used + 1;   // nodes 0 .. used, one rank each
  // The trial's ranks start together (a barrier of their own: a rank that sleeps at a barrier
  // would let them leave it far apart); the others sleep at the world's until they are done.
  MPI_Comm group = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, mine.empty() && rank != gatherer ? MPI_UNDEFINED : 0, rank, &group);
  if (group != MPI_COMM_NULL) {
    for (int b = 0; b < s.blocks + 1; ++b) {
      MPI_Barrier(group);
      double slowest = 0;
      if (rank == gatherer) {
        for (int j = 0; j < participants; ++j) {
          double took = 0;
          MPI_Recv(&took, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          slowest = std::max(slowest, took);
        }
        for (int node = 0; node < participants; ++node) MPI_Send(&slowest, 1, MPI_DOUBLE, world(node), 5, MPI_COMM_WORLD);
        continue;
      }
      const double t = MPI_Wtime();
      for (std::size_t j = 0; j < mine.size(); ++j) {
        char* at = buf.data() + mine[j].at;
        if (mine[j].sending) MPI_Isend(at, mine[j].bytes, MPI_BYTE, mine[j].peer, 2, MPI_COMM_WORLD, &req[j]);
        else MPI_Irecv(at, mine[j].bytes, MPI_BYTE, mine[j].peer, 2, MPI_COMM_WORLD, &req[j]);
      }
      MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
      const double took = MPI_Wtime() - t;
      if (gatherer >= 0) {
        MPI_Send(&took, 1, MPI_DOUBLE, gatherer, 4, MPI_COMM_WORLD);
        MPI_Recv(&slowest, 1, MPI_DOUBLE, gatherer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Allreduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, group);
      }
      if (b > 0) times.push_back(slowest);
    }
    MPI_Comm_free(&group);
  }
  barrier(mine.empty());
  Sample out = rank == 0 ? summarise(times) : Sample{};   // rank 0 is in every trial
  MPI_Bcast(&out, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return out;
}

// Two flows of `bytes` into rank 0 at once, from ranks a and b: per block (after one that pays the
// connections), the time from the three ranks' common start until the first flow arrived at rank 0.
Sample first_of_two(int a, int b, Bytes bytes, const Settings& s, int rank) {
  const bool mine = rank == 0 || rank == a || rank == b;
  const int n = static_cast<int>(bytes);
  std::vector<char> buf(2 * static_cast<std::size_t>(bytes), 1);
  std::vector<double> times;
  MPI_Comm group = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, mine ? 0 : MPI_UNDEFINED, rank, &group);
  if (group != MPI_COMM_NULL) {
    for (int k = 0; k < s.blocks + 1; ++k) {
      MPI_Barrier(group);
      const double t = MPI_Wtime();
      double first = 0;
      if (rank == 0) {
        MPI_Request req[2];
        MPI_Irecv(buf.data(), n, MPI_BYTE, a, 3, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(buf.data() + n, n, MPI_BYTE, b, 3, MPI_COMM_WORLD, &req[1]);
        int which = 0;
        MPI_Waitany(2, req, &which, MPI_STATUS_IGNORE);
        first = MPI_Wtime() - t;
        MPI_Wait(&req[1 - which], MPI_STATUS_IGNORE);
      } else {
        MPI_Send(buf.data(), n, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
      }
      MPI_Barrier(group);
      if (k > 0) times.push_back(first);
    }
    MPI_Comm_free(&group);
  }
  barrier(!mine);
  Sample out = rank == 0 ? summarise(times) : Sample{};
  MPI_Bcast(&out, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return out;
}

Sample allreduce(const Settings& s) {
  double x = 1, y = 0;
  const int iters = iterations_for(2e-5, s);
  std::vector<double> times;
  for (int b = 0; b < s.blocks; ++b) {
    barrier(false);
    const double t = MPI_Wtime();
    for (int k = 0; k < iters; ++k) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double mine = (MPI_Wtime() - t) / iters, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(slowest);
  }
  return summarise(times);
}

std::vector<commfit::PingPong> curve(int a, int b, const Settings& s, int rank, json& table) {
  std::vector<commfit::PingPong> points;
  std::vector<Bytes> sizes = {8, 64, 512, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 1 << 20, 4 << 20};
  if (s.quick) sizes = {8, 512, 4096, 16384, 65536, 262144, 1 << 20};
  table = json::array();
  for (const Bytes bytes : sizes) {
    const Sample p = ping_pong(a, b, bytes, s, rank);
    points.push_back({bytes, p.median});
    table.push_back({{"bytes", bytes}, {"one_way_s", p.median}, {"spread", p.spread}});
  }
  return points;
}

json fit_json(const commfit::PingPongFit& f) {
  json j = {{"start_s", f.small.start_s}, {"eager_bandwidth_Bps", std::isfinite(f.small.bandwidth_Bps) ? f.small.bandwidth_Bps : 0.0},
            {"bandwidth_Bps", f.large.bandwidth_Bps}, {"largest_error", f.error}};
  if (f.eager_limit) j["eager_limit"] = *f.eager_limit;
  return j;
}

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * x);
  return buf;
}

// The cores this node's ranks may run on, whatever the MPI library bound each rank to: the CPUs
// of the process's cgroup cpuset (cgroup v2's cpuset.cpus.effective), else the processors online.
int node_cores() {
  int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  std::ifstream cgroup("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroup, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    std::ifstream cpus("/sys/fs/cgroup" + line.substr(3) + "/cpuset.cpus.effective");
    std::string list;
    if (!std::getline(cpus, list) || list.empty()) break;
    // "0-3,8,10-11": ranges and single CPUs.
    int counted = 0;
    std::istringstream parts(list);
    for (std::string part; std::getline(parts, part, ',');) {
      const auto dash = part.find('-');
      try {
        const int lo = std::stoi(part.substr(0, dash)), hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
        if (hi >= lo) counted += hi - lo + 1;
      } catch (const std::exception&) {
        counted = 0;
        break;
      }
    }
    if (counted > 0) cores = cores > 0 ? std::min(cores, counted) : counted;
    break;
  }
  return std::max(1, cores);
}

int run(const Settings& s) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // The nodes: each rank's node is named by its node's lowest world rank.
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int leader = rank;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  // The fewest cores of any node, and the most ranks any node holds here.
  int cores = node_cores(), most_ranks = node_size;
  MPI_Allreduce(MPI_IN_PLACE, &cores, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &most_ranks, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::vector<int> leaders(static_cast<std::size_t>(size));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> heads;   // the first rank of every node but rank 0's
  int neighbour = -1;       // a rank of rank 0's node
  for (int r = 0; r < size; ++r) {
    if (leaders[r] == r && leaders[r] != leaders[0]) heads.push_back(r);
    if (r != 0 && leaders[r] == leaders[0] && neighbour < 0) neighbour = r;
  }
  const int nodes = static_cast<int>(heads.size()) + 1;
  if (size < 2) {
    if (rank == 0) std::fprintf(stderr, "commfit-calibrate: run it on 2 ranks or more (mpirun -np N); one rank has nothing to measure\n");
    return 2;
  }
  const double started = MPI_Wtime();
  json calibration;
  calibration["ranks"] = size;
  calibration["nodes"] = nodes;
  {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    std::string v(version, static_cast<std::size_t>(len));
    calibration["mpi"] = v.substr(0, v.find_first_of("\n,"));
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    calibration["host_of_rank_0"] = host;
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    calibration["date"] = date;
    calibration["blocks"] = s.blocks;
  }
  json machine;
  machine["format"] = "commfit-machine";
  machine["version"] = 1;
  if (!s.name.empty()) machine["name"] = s.name;
  std::string report;
  auto say = [&](const std::string& line) {
    if (rank == 0) std::printf("commfit-calibrate: %s\n", line.c_str());
  };
  say(std::to_string(size) + " ranks on " + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes"));
#ifndef SMPI_H
  // The cores of a node (under SimGrid a host's shared memory is not shared out: none recorded).
  machine["cores_per_node"] = cores;
  calibration["ranks_per_node"] = most_ranks;
  say(std::to_string(cores) + (cores == 1 ? " core" : " cores") + " a node" +
      (most_ranks > cores ? ", " + std::to_string(most_ranks) + " ranks on one: they share its cores"
                          : ""));
#endif

  // Inside a node.
  std::optional<commfit::PingPongFit> intra;
  std::vector<commfit::PingPong> intra_points;
  if (neighbour > 0) {
    json table;
    const auto points = intra_points = curve(0, neighbour, s, rank, table);
    intra = commfit::fit_ping_pong(points);
    calibration["intra_node_ping_pong"] = {{"ranks", {0, neighbour}}, {"sizes", table}, {"fit", fit_json(*intra)}};
    say("inside a node (ranks 0 and " + std::to_string(neighbour) + "): " + commfit::human_seconds(intra->small.start_s) + " + bytes / " +
        std::to_string(intra->large.bandwidth_Bps / 1e9).substr(0, 5) + " GB/s, fit within " + percent(intra->error));
  }
  // Between nodes (or, on one node, the same pair: the network is shared memory). Routes differ in
  // length (a fat tree's nearest nodes share a switch): the small-message time to up to 16 other
  // nodes, spread over them, picks the node whose time is the median, and the curve is measured
  // with it.
  int far = neighbour;
  std::optional<commfit::Topology> topology;
  if (!s.topology.empty()) topology = commfit::Topology::parse(s.topology);
  std::optional<commfit::RouteFit> route;
  // Flows that share a link: equal shares, or shares by route latency (SimGrid's RTT weighting,
  // NetworkOptions::rtt_weight_bytes): the rule whose prediction of the first arrival is nearer
  // the measured one, with the network model's penalty (under IB, two flows into one node pay
  // 2 Be each, which caps the near flow's share).
  struct SharedTrial {
    Sample first;
    commfit::SharedLink link;
    int near_links = 0, far_links = 0;
    Bytes bytes = 0;
  };
  std::optional<SharedTrial> shared;
  // `chosen`: the rule the flow trials chose (under IB), reported beside the shared link's figures.
  const auto decide_shares = [&](double penalty = 1, std::optional<bool> chosen = std::nullopt) {
    shared->link.penalty = penalty;
    const double equal = commfit::first_arrival_s(shared->bytes, shared->near_links, shared->far_links, shared->link, false);
    const double by_route = commfit::first_arrival_s(shared->bytes, shared->near_links, shared->far_links, shared->link, true);
    const double measured = shared->first.median;
    const bool weighted = chosen ? *chosen : std::abs(std::log(measured / by_route)) < std::abs(std::log(measured / equal));
    json& row = calibration["shared_link"];
    row["equal_shares_s"] = equal, row["shares_by_route_s"] = by_route, row["penalty"] = penalty;
    if (weighted) machine["rtt_weight_bytes"] = 0.0;
    else machine.erase("rtt_weight_bytes");
    say("two flows into one node over one link, from " + std::to_string(shared->near_links) + " and " + std::to_string(shared->far_links) +
        " links: the first arrives in " + commfit::human_seconds(measured) + " (equal shares " + commfit::human_seconds(equal) +
        ", shares by route latency " + commfit::human_seconds(by_route) + (penalty > 1 ? ", each flow's bound over " + std::to_string(penalty).substr(0, 5) : std::string()) +
        "): " + (weighted ? "shares by route latency" : "equal shares") + (chosen ? " (as the flow trials fit better)" : ""));
    return weighted;
  };
  int longest_rank = -1, longest_links = 0, nearest_rank = -1, nearest_links = 0, sharing_rank = -1, sharing_links = 0;
  if (!heads.empty()) {
    std::vector<std::pair<double, int>> times;
    json sample = json::array();
    const std::size_t n = std::min<std::size_t>(16, heads.size());
    for (std::size_t j = 0; j < n; ++j) {
      const int r = heads[j * heads.size() / n];
      const Sample p = ping_pong(0, r, 8, s, rank);
      times.emplace_back(p.median, r);
      sample.push_back({{"rank", r}, {"one_way_s", p.median}, {"spread", p.spread}});
    }
    std::sort(times.begin(), times.end());
    far = times[(times.size() - 1) / 2].second;
    // On a given topology, the samples' route lengths give the latency per link, and the longest
    // route's rate at 1 MiB (to the node farthest from rank 0) a window bound (NetworkOptions::window_bytes) when it is below the rest.
    if (topology) {
      std::vector<commfit::RouteSample> routes;
      std::vector<commfit::Link> links;
      for (json& x : sample) {
        topology->route(x["rank"].get<int>(), 0, links);
        x["links"] = links.size();
        routes.push_back({static_cast<int>(links.size()), x["one_way_s"].get<double>()});
      }
      if (const auto fit = commfit::fit_route_latency(routes)) {
        route = *fit;
        for (const int h : heads) {   // the nodes farthest from and nearest to rank 0, sampled or not
          topology->route(h, 0, links);
          const int n = static_cast<int>(links.size());
          if (n > longest_links) longest_links = n, longest_rank = h;
          if (nearest_rank < 0 || n < nearest_links) nearest_links = n, nearest_rank = h;
        }
        // The node farthest from rank 0 whose route ends on the nearest node's last link: two flows
        // that share a link.
        if (nearest_rank >= 0 && nearest_links > 0) {
          topology->route(nearest_rank, 0, links);
          const commfit::Link last = links.back();
          for (const int h : heads) {
            topology->route(h, 0, links);
            if (!links.empty() && links.back() == last && static_cast<int>(links.size()) > sharing_links)
              sharing_links = static_cast<int>(links.size()), sharing_rank = h;
          }
        }
        calibration["routes"] = {{"link_latency_s", fit->link_latency_s}, {"base_s", fit->base_s}, {"error", fit->error}};
        say("routes of up to " + std::to_string(longest_links) + " links: " +
            commfit::human_seconds(fit->base_s) + " + " + commfit::human_seconds(fit->link_latency_s) + " a link, fit within " +
            percent(fit->error));
      }
    }
    calibration["inter_node_8_bytes"] = sample;
  }
  std::optional<commfit::PingPongFit> inter;
  std::vector<commfit::PingPong> net_points = intra_points;
  if (!heads.empty()) {
    json table;
    const auto points = net_points = curve(0, far, s, rank, table);
    inter = commfit::fit_ping_pong(points);
    calibration["inter_node_ping_pong"] = {{"ranks", {0, far}}, {"sizes", table}, {"fit", fit_json(*inter)}};
    say("between nodes (ranks 0 and " + std::to_string(far) + "): " + commfit::human_seconds(inter->small.start_s) + " + bytes / " +
        std::to_string(inter->large.bandwidth_Bps / 1e9).substr(0, 5) + " GB/s, fit within " + percent(inter->error));
  }
  const commfit::PingPongFit& net = inter ? *inter : *intra;
  const Sample post = posting(0, far, s, rank);
  calibration["posting"] = {{"ranks", {0, far}}, {"per_message_s", post.median}, {"spread", post.spread}};
  // tau: the smallest message's one-way time (the model's is tau + bytes / bandwidth), which the
  // line's start may undershoot.
  const double tau = std::max(net.small.start_s, net_points.front().one_way_s - static_cast<double>(net_points.front().bytes) / net.large.bandwidth_Bps);
  const double bandwidth = net.large.bandwidth_Bps;
  const double overhead = std::min(post.median, tau / 2);
  machine["tau_s"] = tau;
  machine["bandwidth_Bps"] = bandwidth;
  machine["overhead_s"] = overhead;
  if (net.eager_limit) machine["eager_limit"] = *net.eager_limit;
  // The rendezvous's handshake: where the large messages' line starts later than the model's
  // rendezvous does (tau less the receive overhead an eager message pays). Real MPI libraries pay
  // a round trip or more there; under SimGrid it is below (none).
  const double handshake = net.eager_limit ? net.large.start_s - (tau - overhead) : 0;
  if (handshake > 0.05 * tau) machine["rendezvous_s"] = handshake;
  if (route && route->link_latency_s > 0) {
    machine["link_latency_s"] = route->link_latency_s;
    const Bytes big = Bytes{1} << 20;
    const Sample t = ping_pong(0, longest_rank, big, s, rank);
    const double latency = longest_links * route->link_latency_s;
    calibration["longest_route"] = {{"rank", longest_rank}, {"links", longest_links}, {"bytes", big}, {"one_way_s", t.median}, {"spread", t.spread}};
    if (const auto window = commfit::fit_window(big, t.median, route->base_s + latency, latency, bandwidth)) {
      machine["window_bytes"] = *window;
      say("the longest route (" + std::to_string(longest_links) + " links) moves 1 MiB at " +
          std::to_string(static_cast<double>(big) / (t.median - route->base_s - latency) / 1e9).substr(0, 5) + " GB/s: a window of " +
          commfit::human_bytes(*window));
    }
    // Flows that share a link: equal shares, or shares by route latency (SimGrid's RTT weighting,
    // NetworkOptions::rtt_weight_bytes): 1 MiB from the nearest node and 1 MiB from the farthest
    // whose route ends on the same link into rank 0 at once, and the time until the first arrived,
    // against what each rule predicts.
    if (nearest_links < sharing_links) {
      const Sample first = first_of_two(nearest_rank, sharing_rank, big, s, rank);
      const double w = machine.contains("window_bytes") ? machine["window_bytes"].get<double>() : 0;
      shared = SharedTrial{first, {route->base_s, route->link_latency_s, bandwidth, w}, nearest_links, sharing_links, big};
      calibration["shared_link"] = {{"ranks", {nearest_rank, sharing_rank}}, {"links", {nearest_links, sharing_links}}, {"bytes", big},
                                    {"first_arrival_s", first.median}, {"spread", first.spread}};
      decide_shares();
    }
  }
  if (intra) {
    // Inside a node the model adds intra_latency_s to both ends' overheads. On one node these are
    // tau and the bandwidth again, for plans made with the job's nodes (+nodeN, in-job planning).
    machine["intra_latency_s"] = std::max(0.0, intra->small.start_s - 2 * overhead);
    machine["intra_bandwidth_Bps"] = intra->large.bandwidth_Bps;
  }
  say("tau " + commfit::human_seconds(tau) + ", bandwidth " + std::to_string(bandwidth / 1e9).substr(0, 5) + " GB/s, overhead " +
      commfit::human_seconds(overhead) + (net.eager_limit ? ", eager limit " + commfit::human_bytes(static_cast<double>(*net.eager_limit)) : "") +
      (machine.contains("rendezvous_s") ? ", a rendezvous " + commfit::human_seconds(handshake) + " more" : ""));

  // Concurrent flows between nodes: which model reproduces them, and the IB penalties.
  std::string model = "flow";
  if (heads.size() >= 2) {
    std::vector<commfit::FlowTrial> trials;
    json rows = json::array();
    const Bytes bytes = s.quick ? Bytes{1} << 18 : Bytes{1} << 20;
    for (const commfit::FlowKind kind : {commfit::FlowKind::incast, commfit::FlowKind::outcast, commfit::FlowKind::hot})
      for (int k = kind == commfit::FlowKind::hot ? 2 : 1; k <= 32; k *= 2) {
        commfit::FlowTrial trial{k, kind, bytes, 0};
        if (commfit::trial_ends(trial) > static_cast<int>(heads.size())) break;
        const Sample t = flows(heads, trial, s, rank);
        trial.seconds = t.median;
        trials.push_back(trial);
        rows.push_back({{"flows", k}, {"kind", commfit::to_string(kind)}, {"bytes", bytes}, {"seconds", t.median}, {"spread", t.spread}});
      }
    commfit::NetworkOptions flow;
    flow.overhead_s = overhead;
    if (net.eager_limit) flow.eager_limit = *net.eager_limit;
    if (machine.contains("link_latency_s")) flow.link_latency_s = machine["link_latency_s"].get<double>();
    if (machine.contains("window_bytes")) flow.window_bytes = machine["window_bytes"].get<double>();
    if (machine.contains("rtt_weight_bytes")) flow.rtt_weight_bytes = machine["rtt_weight_bytes"].get<double>();
    // The trials priced where they ran: on the given topology (world ranks), or on a crossbar.
    commfit::TrialPlace place;
    if (topology) {
      place.rank_of.push_back(0);
      for (const int h : heads) place.rank_of.push_back(static_cast<commfit::Rank>(h));
      place.ranks = size;
      place.topology = *topology;
    }
    double flow_error = commfit::model_error(trials, place, tau, bandwidth, flow);
    commfit::IbFit ib = commfit::fit_ib_factors(trials, place, tau, bandwidth, flow);
    // Under IB the two flows of the shared link pay its penalty (2 Be each), which can cap the near
    // flow's share so that both rules predict its first arrival alike (on a fat tree, from 2 and 4
    // links). The flow trials decide instead: the factors are fitted under each rule, and the rule
    // whose fit explains the trials better is the IB model's (on SimGrid's fat trees by route
    // latency: 0.6 % against 18-31 %).
    commfit::NetworkOptions ib_net = flow;
    if (shared) {
      commfit::NetworkOptions other = flow;
      other.rtt_weight_bytes = flow.rtt_weight_bytes >= 0 ? -1 : 0;
      const commfit::IbFit refit = commfit::fit_ib_factors(trials, place, tau, bandwidth, other);
      if (refit.error < ib.error) ib_net = other, ib = refit;
    }
    // The InfiniBand model when its penalties explain the flows clearly better.
    if (ib.error < flow_error / 1.5) model = "ib";
    if (model == "ib" && shared) {
      decide_shares(2 * ib.factors.be, ib_net.rtt_weight_bytes >= 0);
      flow = ib_net;
      flow_error = commfit::model_error(trials, place, tau, bandwidth, flow);
    }
    for (std::size_t k = 0; k < trials.size(); ++k) {
      rows[k]["flow_model_s"] = commfit::model_trial_s(trials[k], place, tau, bandwidth, flow);
      commfit::NetworkOptions with = flow;
      with.model = commfit::Network::ib, with.ib = ib.factors;
      rows[k]["ib_model_s"] = commfit::model_trial_s(trials[k], place, tau, bandwidth, with);
    }
    calibration["flows"] = {{"trials", rows}, {"flow_model_largest_error", flow_error}, {"ib_model_largest_error", ib.error},
                            {"ib_factors", commfit::format_ib_factors(ib.factors)}};
    say("concurrent flows (" + std::to_string(trials.size()) + " trials): flow model within " + percent(flow_error) + ", ib model (" +
        commfit::format_ib_factors(ib.factors) + ") within " + percent(ib.error) + ": " + model);
    if (model == "ib") machine["ib_factors"] = commfit::format_ib_factors(ib.factors);
  } else {
    say(heads.empty() ? "one node: no network between nodes, tau and the bandwidth are shared memory's"
                      : "two nodes: no concurrent flows to fit (run on three nodes or more for the network model's penalties)");
  }
  machine["network"] = model;
  const Sample ar = allreduce(s);
  calibration["allreduce_8_bytes_s"] = ar.median;
  calibration["seconds"] = MPI_Wtime() - started;
  machine["calibration"] = calibration;
  say("an 8-byte MPI_Allreduce: " + commfit::human_seconds(ar.median));
  // Keys in the schema's order: what the reader checks first.
  json ordered;
  for (const char* key : {"format", "version", "name", "network", "tau_s", "bandwidth_Bps", "overhead_s", "eager_limit", "rendezvous_s", "ib_factors",
                          "link_latency_s", "window_bytes", "rtt_weight_bytes", "intra_latency_s", "intra_bandwidth_Bps", "cores_per_node",
                          "calibration"})
    if (machine.contains(key)) ordered[key] = machine[key];
  int failed = 0;
  if (rank == 0) {
    try {
      const std::string text = ordered.dump(1) + "\n";
      commfit::parse_machine_file(text, s.output);   // what it writes, it reads back
      commfit::write_file_atomic(text, s.output);
      say("wrote " + s.output + " in " + commfit::human_seconds(MPI_Wtime() - started));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "commfit-calibrate: error: %s\n", e.what());
      failed = 1;
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return failed ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Settings s;
  CLI::App app("commfit-calibrate: measure this machine's network and write a machine file for commfit (docs/FORMAT.md \"Machine files\")");
  app.add_option("-o,--output", s.output, "Machine file to write")->capture_default_str();
  app.add_option("--name", s.name, "The machine's name, recorded in the file");
  app.add_option("--blocks", s.blocks, "Timed blocks per measurement (their median is kept)")->check(CLI::Range(3, 1000))->capture_default_str();
  app.add_flag("--quick", s.quick, "Fewer sizes and shorter blocks (a rough file in a few seconds)");
  app.add_option("--topology", s.topology,
                 "The machine's topology (commfit plan --topology's spec, e.g. torus:4x4x4 or fattree:...+node16): the flow trials "
                 "are priced on it (default: a crossbar, one port per node)");
  int rc = 0;
  try {
    app.parse(argc, argv);
    if (!s.topology.empty()) {   // every rank reads the same spec: every rank refuses it alike
      int size = 0;
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      try {
        commfit::Topology::parse(s.topology).check_ranks(size);
      } catch (const std::exception& e) {
        if (rank == 0) std::fprintf(stderr, "commfit-calibrate: error: --topology %s: %s\n", s.topology.c_str(), e.what());
        MPI_Finalize();
        return 2;
      }
    }
    rc = run(s);
  } catch (const CLI::CallForHelp&) {   // every rank parses the same arguments: rank 0 alone prints
    if (rank == 0) std::fputs(app.help().c_str(), stdout);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) std::fprintf(stderr, "commfit-calibrate: error: %s (see commfit-calibrate --help)\n", e.what());
    rc = 2;
  }
  MPI_Finalize();
  return rc;
}

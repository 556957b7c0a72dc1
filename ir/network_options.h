// The network model's parameters (ir/network_sim.h prices plans with them): which model, the
// per-message overhead, the eager limit, the InfiniBand penalty factors, link latency, window and
// sharing weights, and the intra-node figures. A plan records the ones it was priced with
// (ir/plan_contract.h).
#pragma once

#include "ir/types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace commfit {

enum class Network { flow, ib };

const char* to_string(Network n);
std::optional<Network> parse_network(std::string_view name);

// SimGrid's smpi/IB-penalty-factors Be;Bs;ys (its documented example values).
struct IbFactors {
  double be = 0.965;
  double bs = 0.925;
  double ys = 1.35;
};

// "Be;Bs;ys" or "Be,Bs,ys"; nullopt when not three positive numbers.
std::optional<IbFactors> parse_ib_factors(std::string_view text);
std::string format_ib_factors(const IbFactors& f);

struct NetworkOptions {
  Network model = Network::flow;
  double overhead_s = -1;          // per-message CPU cost at each end; < 0: tau / 4
  Bytes eager_limit = 65536;       // messages below it are sent eagerly (SMPI's async-small-thresh)
  // A rendezvous message's handshake (the sender's request to send and the receiver's answer,
  // before any byte moves): this much more latency. 0 under SimGrid, whose rendezvous has none;
  // real MPI libraries pay a round trip or more (commfit-calibrate measures it).
  double rendezvous_s = 0;
  IbFactors ib;
  // With a topology: a route's latency is its links x link_latency_s (< 0: every route's is
  // tau - 2 overhead).
  double link_latency_s = -1;
  // A flow's rate is at most window_bytes / (2 x its route's latency) (SimGrid CM02's TCP-gamma
  // bound; the ib penalties divide it); 0: no such bound.
  double window_bytes = 0;
  // SimGrid's network/weight-S: with a topology, shares in proportion to 1 / (route latency +
  // rtt_weight_bytes x sum over the route of 1 / link bandwidth); < 0: equal shares. smpirun's
  // network model (SMPI, like IB) uses 8775.
  double rtt_weight_bytes = -1;
  // Several ranks per node (a topology's +nodeN): a message between two ranks of one node takes
  // no port and no link, only the node's shared memory: it waits intra_latency_s and flows at up
  // to intra_bandwidth_Bps, unshared (SimGrid's loopback link, FATPIPE); it still costs both ends
  // their overhead. Messages between nodes share their nodes' ports (the NIC) on the crossbar, and
  // their IB penalties count per node, as SimGrid's IB nodes are hosts. Defaults: Open MPI 4.1's
  // shared memory on the development machine (`mpirun -np 2 bench/bench_pingpong`: 7.04 GB/s at
  // 1 MiB, 0.49 us one way at 8 bytes, which is below the two overheads: no latency of its own).
  // intra_bandwidth_Bps <= 0: the network's bandwidth.
  double intra_latency_s = 0;
  double intra_bandwidth_Bps = 7.04e9;
  // The cores a node's ranks run on (commfit-calibrate finds them); 0: not known. A node holding
  // more ranks than that is oversubscribed: its ranks take turns on the cores, and as shared
  // memory moves bytes with the ranks' CPUs, the messages inside it together flow at up to
  // cores_per_node x intra_bandwidth_Bps (max-min shared). Without +nodeN every rank is a node of
  // its own and nothing is shared.
  std::uint32_t cores_per_node = 0;
};

// The most cores_per_node any reader (option, manifest, machine file) takes.
inline constexpr std::uint32_t kMaxCoresPerNode = 1u << 20;

}  // namespace commfit

// Max-min fair sharing, the network model's solver (ir/network_sim.h): given the flows that share
// some resources (a rank's ports, a topology's links), each flow with its own rate bound and its
// sharing penalty, the rates that progressive filling gives. SimGrid's levels: a flow limited at
// level L moves at L / its penalty (1 without RTT weighting), and a resource's level is its
// capacity left over the sum of 1 / penalty of its unfixed flows; repeatedly the tightest of the
// resources' levels and the flows' own bounds fixes the flows it limits. Deterministic: ties go
// to the lower position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace commfit {

class MaxMinSharing {
 public:
  // The resources and their capacities (bytes per second), numbered from 0.
  void reset(std::vector<double> capacity);

  // The rates of the flows `flows` (ids into the tables below, each of whose routes lists the
  // resources it uses; a flow may use none and is then limited by its bound alone) into
  // rate[f]. Returns the work done (entries visited), which the simulation counts against its
  // limit.
  std::size_t solve(std::span<const std::uint32_t> flows, const std::vector<std::vector<std::int32_t>>& routes,
                    const std::vector<double>& bound, const std::vector<double>& penalty, std::vector<double>& rate);

 private:
  struct Level {
    double share;   // a level
    std::int32_t q;
    std::uint64_t version;
    friend bool operator>(const Level& a, const Level& b) { return a.share != b.share ? a.share > b.share : a.q > b.q; }
  };
  std::vector<double> capacity_;
  // Per resource: capacity left, sum of 1 / penalty of its unfixed flows, unfixed flows, a
  // version for the heap's stale entries, its position among the touched ones.
  std::vector<double> cap_, weights_;
  std::vector<std::int64_t> users_;
  std::vector<std::uint64_t> version_;
  std::vector<std::uint32_t> slot_;
  // The resources in use and the flows of each (CSR), positions into `flows`.
  std::vector<std::int32_t> touched_;
  std::vector<std::size_t> res_start_, fill_;
  std::vector<std::uint32_t> res_flows_, by_bound_;
  std::vector<Level> heap_;
  std::vector<std::uint8_t> fixed_;
};

}  // namespace commfit

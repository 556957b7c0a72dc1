// The scalar types every IR header shares: a rank, a byte count, a phase number, and the
// index kinds that must not be mixed with them (a node, a link, a port). Kept apart from
// ir/comm_matrix.h (Eigen) so that headers the executor includes (ir/plan.h) need nothing more.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>

namespace commfit {

using Rank = std::int32_t;
using Bytes = std::uint64_t;
using Phase = std::uint32_t;

// An integer of one kind of index that shares its integer type with others: a node (host) and a
// rank are both small integers, a link id and a message number both 64-bit. It converts to and
// from its integer only when asked (Node{3}, n.value(), n.index() for an array), so that one
// kind cannot be passed where the other belongs unnoticed; it compares and orders as its integer.
template <class Tag, class Rep>
class Id {
 public:
  using rep = Rep;
  constexpr Id() = default;
  constexpr explicit Id(Rep v) : v_(v) {}
  constexpr Rep value() const { return v_; }
  constexpr std::size_t index() const { return static_cast<std::size_t>(v_); }
  friend constexpr bool operator==(Id, Id) = default;
  friend constexpr auto operator<=>(Id, Id) = default;

 private:
  Rep v_{};
};

// A network node (a host) of a topology; its ranks are those node_of places on it
// (ir/topology.h). With one rank per node node n holds rank n, but the two are not the same index.
using Node = Id<struct NodeTag, std::int32_t>;
// A directed link of a topology, in [0, link_count()).
using Link = Id<struct LinkTag, std::int64_t>;

// A port of a decomposition's bipartite multigraph (Ranka-Wang §4; the colourings and matchings
// of passes/): every rank sends through its sender port and receives through its receiver port,
// numbered sender u = u and receiver v = p + v, so that one array covers both sides. sender() and
// receiver() are the one place that numbering is written; Port{x} names port x of such an array.
class Port : public Id<struct PortTag, std::int32_t> {
 public:
  using Id::Id;
  static constexpr Port sender(Rank u) { return Port{u}; }
  static constexpr Port receiver(Rank p, Rank v) { return Port{p + v}; }
};

// Largest message size accepted (2^53: every size is exact in a double, totals of up to
// 2^10 such messages cannot overflow 64 bits before they are checked).
inline constexpr Bytes kMaxMessageBytes = Bytes{1} << 53;

}  // namespace commfit

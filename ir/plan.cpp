#include "ir/plan.h"

#include <tuple>

namespace commfit {

const char* to_string(Op op) {
  switch (op) {
    case Op::send: return "send";
    case Op::recv: return "recv";
    case Op::copy: return "copy";
  }
  return "?";
}

const char* to_string(Buffer b) {
  switch (b) {
    case Buffer::send: return "send";
    case Buffer::recv: return "recv";
    case Buffer::stage: return "stage";
  }
  return "?";
}

bool step_less(const Step& a, const Step& b) {
  // recv < send < copy inside a phase: receives are posted first (DESIGN.md).
  auto rank_op = [](Op op) { return op == Op::recv ? 0 : op == Op::send ? 1 : 2; };
  return std::make_tuple(a.phase, rank_op(a.op), a.peer, a.src, a.dst, a.offset) <
         std::make_tuple(b.phase, rank_op(b.op), b.peer, b.src, b.dst, b.offset);
}

}  // namespace commfit

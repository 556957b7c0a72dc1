// lower: Schedule -> Plan (per-rank steps of docs/FORMAT.md §3).
// Each transfer becomes a send step on `from` and a recv step on `to`; the buffer of a step is
// `send` when the rank is the piece's src, `recv` when it is the piece's dst, else `stage`.
// Staged pieces get staging offsets from a first-fit allocator, live from the phase they arrive
// in to the phase their last byte is forwarded; staging_bytes is each rank's high-water mark.
// Needs: a schedule in which every forwarded byte was received earlier. Guarantees: steps in
// step_less order, sends/recvs = the rank's row and column of COM. The manifest is left to the
// caller except ranks, phases, fingerprint and staging_bytes_max.
#pragma once

#include "ir/comm_matrix.h"
#include "ir/plan.h"
#include "ir/schedule.h"

namespace commfit {

Plan lower(const Schedule& s, const CommMatrix& m);

}  // namespace commfit

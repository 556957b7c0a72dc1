// Near-miss suggestions for the command line: "did you mean ...?".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace commfit {

// Optimal string alignment distance: insertions, deletions, substitutions and transpositions of
// two neighbouring characters each cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` when it is near enough to be a slip (at most one edit per
// three characters of the candidate, at least one), the first of equals; "" when none is.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean \"X\"?)" when X is nearest(word, candidates); "" when there is none: the tail
// of an error message.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace commfit

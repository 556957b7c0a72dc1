// SHA-256 (FIPS 180-4 §6.2), for the matrix fingerprint (ir/comm_matrix.h). Small and
// dependency-free so that the IR library, and the executor built on it, link no crypto library.
// Not constant-time and not meant for secrets: it names a matrix, it does not protect one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace commfit {

class Sha256 {
 public:
  Sha256();
  // Appends bytes to the message; may be called any number of times before digest().
  void update(std::string_view bytes);
  // The 32-byte digest of everything given to update(). Call once: the state is padded.
  std::array<std::uint8_t, 32> digest();

 private:
  void compress(const std::uint8_t* block);  // one 64-byte block into state_
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;     // bytes waiting in buffer_ (< 64)
  std::uint64_t length_ = 0;     // message length so far, in bytes
};

// Lower-case hex of the SHA-256 of `bytes` (64 characters).
std::string sha256_hex(std::string_view bytes);

// Tests: with `on`, every Sha256 uses the portable code even where the processor has the x86 SHA
// extensions (not thread-safe: set it before hashing). Returns whether the extensions are used
// otherwise, so that a test can check both paths give the same digests.
bool sha256_portable_only(bool on);

// Lower-case hex of a digest.
std::string to_hex(const std::array<std::uint8_t, 32>& digest);

}  // namespace commfit

// ir/sha256: the FIPS 180-4 test vectors (NIST's "SHA-256 examples"), block boundaries, and the
// matrix fingerprints of the examples as the OpenSSL-based fingerprint gave them before ir/sha256
// replaced it (plans name their matrix by it: a different digest would orphan every plan file).
#include "ir/comm_matrix.h"
#include "ir/matrix_io.h"
#include "ir/sha256.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace commfit;

TEST_CASE("sha256: FIPS 180-4 test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: the portable code and the x86 SHA extensions give the same digests") {
  // Every length up to three blocks, then the million 'a's: with the extensions (where the
  // processor has them) and with the portable code forced.
  std::string text;
  for (int k = 0; k < 200; ++k) text += static_cast<char>('A' + k * 11 % 57);
  std::vector<std::string> fast;
  for (std::size_t n = 0; n <= text.size(); ++n) fast.push_back(sha256_hex(std::string_view(text).substr(0, n)));
  const std::string million = sha256_hex(std::string(1000000, 'a'));
  const bool hardware = sha256_portable_only(true);
  for (std::size_t n = 0; n <= text.size(); ++n) CHECK(sha256_hex(std::string_view(text).substr(0, n)) == fast[n]);
  CHECK(sha256_hex(std::string(1000000, 'a')) == million);
  CHECK(million == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  sha256_portable_only(false);
  MESSAGE("x86 SHA extensions " << (hardware ? "used" : "absent: both runs were portable"));
}

TEST_CASE("sha256: the digest does not depend on how the message is split") {
  std::string text;
  for (int k = 0; k < 300; ++k) text += static_cast<char>('a' + k * 7 % 26);
  const std::string whole = sha256_hex(text);
  // Every split point, so that padding at 55, 56, 63 and 64 buffered bytes is exercised.
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    Sha256 h;
    h.update(std::string_view(text).substr(0, cut));
    h.update(std::string_view(text).substr(cut));
    REQUIRE(to_hex(h.digest()) == whole);
  }
  for (std::size_t n : {55, 56, 63, 64, 65, 119, 120}) {
    Sha256 h;
    for (std::size_t k = 0; k < n; ++k) h.update(std::string_view(text).substr(k, 1));
    CHECK(to_hex(h.digest()) == sha256_hex(std::string_view(text).substr(0, n)));
  }
}

TEST_CASE("sha256: the examples' fingerprints are the ones OpenSSL gave") {
  // From tests/golden/plans/ (made with OpenSSL's EVP_sha256) and, for random_sparse_32, from
  // Python's hashlib (OpenSSL 3.0) over the canonical text.
  const std::pair<const char*, const char*> cases[] = {
      {"random_sparse_32", "eea2b2b06fbe59ed5e00a4f409b7698e06b8c4daa9e0017660aa29c1a9493f5a"},
      {"sample_sort_8", "4bc0d9b331ca3cd14d551d823d32b948641c2045b8513f7735bf188578113664"},
      {"stencil2d_16", "cf0d93b507055325d0150240092a04e140d2ea6ccf36251e918ff5d5643d797f"},
      {"transport_fig1", "32d18381722e5afbab64f44500ae8d6833af33359442f954a594dd4c9f6411e3"},
      {"transport_fig9", "41230881b80c60aafc163071549e628a4355cc6ad07c4b217ac39c9cfad7a0cc"},
  };
  for (const auto& [name_, digest] : cases) {
    const auto& name = name_;
    CAPTURE(name);
    const MatrixFile f = read_matrix(std::string(COMMFIT_SOURCE_DIR) + "/examples/" + name + ".json");
    CHECK(matrix_fingerprint(f.matrix) == std::string("sha256:") + digest);
  }
}

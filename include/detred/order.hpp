// The canonical order: the single source of truth for how every deterministic detred algorithm associates its
// operands. Full definition, drawings and error analysis: docs/ORDER.md. Summary:
//
//   T(a, 2^k), for a a multiple of 2^k, is the complete pairwise tree over x[a], ..., x[a + 2^k - 1]:
//       T(a, 1) = x[a],    T(a, 2^k) = T(a, 2^(k-1)) (+) T(a + 2^(k-1), 2^(k-1)).
//   Write n = 2^k1 + 2^k2 + ... + 2^kr with k1 > k2 > ... > kr (its binary digits). The blocks B1 = [0, 2^k1),
//   B2 = [2^k1, 2^k1 + 2^k2), ... are aligned, so each has a complete tree T_j, and
//       reduce(x[0..n)) = ((T_1 (+) T_2) (+) T_3) ... (+) T_r        (a left fold of the block trees)
//       reduce(x[0..0)) = the identity.
//   inclusive_scan[i] = reduce(x[0..i]) and exclusive_scan[i] = reduce(x[0..i)), bit for bit.
//
// It is a function of n alone (and of the element and accumulation types, which fix the arithmetic), never of a
// thread count, grid, block size or device. Operands are never reordered, so it also serves non-commutative
// operators. Any aligned power-of-two chunk is a complete subtree, so any partition into such chunks (CPU threads,
// GPU blocks) computes the same bits; that is what makes it parallel.
//
// Thread safety: the functions are pure; a binary_counter is a plain value (one object per thread).
#pragma once

#include <cassert>
#include <cstdint>

#include "detred/config.hpp"
#include "detred/detail/bits.hpp"

namespace detred {

// Bumped whenever any result bit of any canonical algorithm could change.
inline constexpr int canonical_order_version = 2;

// h(n): the largest number of combining operations on the path from any input to the result of reduce(x[0..n)),
// = floor(log2 n) + popcount(n) - 1 for n >= 1 (n = 2^k gives k; n = 2^k - 1 gives 2k - 2). Error bounds use it.
constexpr DETRED_HD int canonical_depth(std::uint64_t n) {
  if (n <= 1) return 0;
  return detail::highest_bit(n) + detail::popcount(n) - 1;
}

// The canonical order as a streaming algorithm: a binary counter of complete subtrees.
//
// node[k] holds T(a, 2^k) for the one aligned block of size 2^k that bit k of `count` stands for. push(value, k)
// appends the root of the next aligned block of 2^k inputs (count must be a multiple of 2^k), carrying like a binary
// increment: equal-size neighbours merge, the earlier one on the left. fold() left-folds the remaining blocks from
// the largest, which is exactly reduce() above. Pushing single inputs (k = 0) is the sequential reference
// implementation of the order; pushing chunk roots is how parallel backends join their pieces.
//
// Combine(left, right) must leave left (+) right in `left`. Node must be default-constructible; at most 64 levels.
template <class Node, class Combine>
class binary_counter {
 public:
  constexpr DETRED_HD explicit binary_counter(Combine combine = Combine{}) : combine_(combine) {}

  constexpr DETRED_HD void push(Node value, int level = 0) {
    const std::uint64_t size = std::uint64_t{1} << level;
    assert((count_ & (size - 1)) == 0 && "binary_counter::push: count must be a multiple of 2^level");
    while (count_ >> level & 1u) {
      Node left = static_cast<Node&&>(node_[level]);
      combine_(left, value);
      value = static_cast<Node&&>(left);
      ++level;
    }
    node_[level] = static_cast<Node&&>(value);
    count_ += size;  // the carries clear exactly the bits the merges consumed
  }

  constexpr DETRED_HD std::uint64_t count() const { return count_; }
  constexpr DETRED_HD bool empty() const { return count_ == 0; }

  // The left fold of the remaining blocks, largest first. Requires !empty().
  constexpr DETRED_HD Node fold() const {
    int level = detail::highest_bit(count_);
    Node acc = node_[level];
    for (--level; level >= 0; --level) {
      if (count_ >> level & 1u) combine_(acc, node_[level]);
    }
    return acc;
  }

 private:
  Node node_[64]{};
  std::uint64_t count_ = 0;
  Combine combine_;
};

// The binary counter for the pushes that finish a parallel reduce: roots of blocks in index order with strictly
// decreasing sizes, as the binary digits of a count give them (the chunk roots' digits, then the tail's, then the
// remainder's). A binary_counter never merges such blocks as equal neighbours, so its fold is exactly the left fold
// kept here, ((T_1 (+) T_2) (+) T_3) ...: the same bits in one Node instead of 64. On the GPU this matters: a counter's
// 64 nodes would live in local memory in every thread of a finishing block (measured at about twice the finishing
// time of the canonical sum at 1 GiB on the H100, docs/history/performance.md).
template <class Node, class Combine>
class digit_fold {
 public:
  constexpr DETRED_HD explicit digit_fold(Combine combine = Combine{}) : combine_(combine) {}

  // Requires level below every earlier push's (the block must not be mergeable with the previous one).
  constexpr DETRED_HD void push(Node value, int level = 0) {
    assert((empty() || level < last_level_) && "digit_fold::push: levels must strictly decrease");
    if (empty()) {
      acc_ = static_cast<Node&&>(value);
    } else {
      combine_(acc_, value);
    }
    last_level_ = level;
  }

  constexpr DETRED_HD bool empty() const { return last_level_ == 64; }
  // The left fold of the pushed roots. Requires !empty().
  constexpr DETRED_HD Node fold() const { return acc_; }

 private:
  Node acc_{};
  int last_level_ = 64;
  Combine combine_;
};

}  // namespace detred

// The canonical order (docs/ORDER.md) run on the CPU for any operand type: the engine behind reduce(), product()
// and the scans. Operands are produced by load(i) and combined by combine(left, right) (left <- left (+) right),
// never reordered, so non-commutative operators are safe.
//
// Both functions cut the input into aligned chunks of detail::cpu_chunk_size elements, each a complete subtree, and
// give the same bits for every thread count.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "detred/detail/bits.hpp"
#include "detred/detail/cpu_tuning.hpp"
#include "detred/detail/parallel.hpp"
#include "detred/order.hpp"

namespace detred::detail {

template <class Node, class Combine>
struct combine_in_place {
  Combine combine;
  void operator()(Node& left, const Node& right) const { combine(left, right); }
};

// reduce(x[0..n)) in the canonical order; nullopt when n == 0.
template <class Node, class Load, class Combine>
std::optional<Node> canonical_reduce(std::size_t n, Load load, Combine combine, const cpu_options& options) {
  using counter = binary_counter<Node, combine_in_place<Node, Combine>>;
  if (n == 0) return std::nullopt;
  const std::size_t full_chunks = n / cpu_chunk_size;
  std::vector<Node> chunk_root(full_chunks);
  parallel_for_chunks(full_chunks, options, [&](std::size_t chunk) {
    counter local{{combine}};
    for (std::size_t i = chunk * cpu_chunk_size, end = i + cpu_chunk_size; i < end; ++i) local.push(load(i));
    chunk_root[chunk] = local.fold();  // one complete subtree: the fold is its root
  });
  counter total{{combine}};
  for (std::size_t c = 0; c < full_chunks; ++c) total.push(std::move(chunk_root[c]), cpu_chunk_level);
  for (std::size_t i = full_chunks * cpu_chunk_size; i < n; ++i) total.push(load(i));
  return total.fold();
}

// Canonical scan. Inclusive (identity == nullptr): store(i, reduce(x[0..i])); exclusive: store(i, reduce(x[0..i))),
// with *identity for i = 0. Every output is bit for bit the canonical reduce of its prefix.
// Up-sweep: the binary counter keeps the complete subtrees of the prefix; down-sweep: a second array keeps the left
// fold of the counter's blocks, so each output costs one combine (a Fenwick-tree recurrence:
// P(m) = P(m - lowbit(m)) (+) T(m - lowbit(m), lowbit(m))). In parallel, pass 1 reduces each chunk, a short
// sequential scan over the chunk roots gives every chunk its carry-in P(chunk start), and pass 2 rescans each chunk
// from its carry-in. store may write over the input: each index is loaded before it is stored.
template <class Node, class Load, class Combine, class Store>
void canonical_scan(std::size_t n, Load load, Combine combine, Store store, const Node* identity,
                    const cpu_options& options) {
  const bool exclusive = identity != nullptr;
  // Scans [begin, end) from carry_in = P(begin) (null when begin == 0). last_out, when given, is P(end): the last
  // inclusive output of a full chunk needs subtrees larger than the chunk, which the chunk alone cannot build.
  auto scan_range = [&](std::size_t begin, std::size_t end, const Node* carry_in, const Node* last_out) {
    Node block[64]{};   // block[k]: T over the aligned block of 2^k elements that bit k of the local count stands for
    Node prefix[64]{};  // prefix[k]: carry_in (+) the left fold of the blocks at levels >= k
    std::uint64_t count = 0;
    // P(begin + count) for count > 0 is prefix[lowest set bit of count].
    auto current_prefix = [&]() -> const Node& {
      if (count == 0) return carry_in != nullptr ? *carry_in : *identity;
      return prefix[detail::lowest_bit(count)];
    };
    for (std::size_t i = begin; i < end; ++i) {
      Node value = load(i);
      if (exclusive) store(i, Node(current_prefix()));
      int level = 0;
      while (count >> level & 1u) {
        Node left = std::move(block[level]);
        combine(left, value);
        value = std::move(left);
        ++level;
      }
      count += 1;
      // The blocks above `level` are unchanged, so their prefix fold is reused: one combine per output.
      const std::uint64_t higher = count >> (level + 1);
      Node out;
      if (higher != 0) {
        out = prefix[detail::lowest_bit(higher) + level + 1];
        combine(out, value);
      } else if (carry_in != nullptr) {
        out = *carry_in;
        combine(out, value);
      } else {
        out = value;
      }
      block[level] = std::move(value);
      if (!exclusive) store(i, (last_out != nullptr && i + 1 == end) ? Node(*last_out) : Node(out));
      prefix[level] = std::move(out);
    }
  };
  if (n == 0) return;
  const std::size_t chunks = (n + cpu_chunk_size - 1) / cpu_chunk_size;
  if (chunks == 1 || resolve_threads(options) == 1) {
    scan_range(0, n, nullptr, nullptr);
    return;
  }
  // Pass 1 (up-sweep over chunks): every full chunk's root.
  const std::size_t full_chunks = n / cpu_chunk_size;
  std::vector<Node> chunk_root(full_chunks);
  parallel_for_chunks(full_chunks, options, [&](std::size_t chunk) {
    binary_counter<Node, combine_in_place<Node, Combine>> local{{combine}};
    for (std::size_t i = chunk * cpu_chunk_size, end = i + cpu_chunk_size; i < end; ++i) local.push(load(i));
    chunk_root[chunk] = local.fold();
  });
  // prefix_at_end[c] = P((c + 1) * chunk_size): the canonical scan of the chunk roots. It is chunk c + 1's carry-in.
  std::vector<Node> prefix_at_end(full_chunks);
  {
    binary_counter<Node, combine_in_place<Node, Combine>> total{{combine}};
    for (std::size_t c = 0; c < full_chunks; ++c) {
      total.push(chunk_root[c], cpu_chunk_level);
      prefix_at_end[c] = total.fold();
    }
  }
  // Pass 2 (down-sweep): rescan each chunk from its carry-in.
  parallel_for_chunks(chunks, options, [&](std::size_t chunk) {
    const std::size_t begin = chunk * cpu_chunk_size;
    const bool full = chunk < full_chunks;
    const std::size_t end = full ? begin + cpu_chunk_size : n;
    scan_range(begin, end, chunk == 0 ? nullptr : &prefix_at_end[chunk - 1], full ? &prefix_at_end[chunk] : nullptr);
  });
}

}  // namespace detred::detail

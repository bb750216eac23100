// The CPU backend of detred/scatter.hpp. scatter_add and index_add accumulate into the fixed-point levels of
// src/cuda/scatter/scatter_levels.hpp (the kernels' representation, so both backends round the same integers):
// a pass over the values fixes the geometry, then the output rows are cut into chunks, each chunk's thread scans every
// contribution and adds those that land in its rows; a slot is touched by one thread only, and the levels are exact
// integer sums, so neither the chunking nor the thread count can change a bit. segment_sum / reduce_by_key: each
// segment reduced on its own (canonical tree of its length, or exact_accumulator), segments spread over threads.
#include "detred/scatter.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "detred/accumulators/exact.hpp"
#include "detred/accumulators/plain.hpp"
#include "detred/detail/parallel.hpp"
#include "detred/errors.hpp"
#include "detred/rows.hpp"
#include "src/cuda/scatter/scatter_levels.hpp"

namespace detred {
namespace {

template <class R, class T>
typename detail::scatter_format<R>::bits_type bits_in_range_format(T x) {
  return bits_of(widen<R>(x));
}

template <class I>
void check_indices(const I* index, std::uint64_t n, std::uint64_t m, const char* what) {
  for (std::uint64_t i = 0; i < n; ++i) {
    if (index[i] < 0 || std::uint64_t(index[i]) >= m)
      detail::throw_invalid(what, "index[" + std::to_string(i) + "] = " + std::to_string(index[i]) +
                                      " is outside [0, m = " + std::to_string(m) + ")");
  }
}

template <class T, class I>
void scatter_rows(const T* source, const I* index, scatter_output_t<T>* out, std::uint64_t n, std::uint64_t m,
                  std::uint64_t d, const cpu_options& options, const char* what) {
  using R = scatter_output_t<T>;
  using word = detail::level_word<R>;
  if (n > detail::max_scatter_terms) detail::throw_invalid(what, "n must be below 2^36");
  if (d == 0 && n > 0) detail::throw_invalid(what, "d must be >= 1");
  if (n > 0 && (source == nullptr || index == nullptr)) detail::throw_invalid(what, "source or index is null");
  if (m > 0 && d > 0 && out == nullptr) detail::throw_invalid(what, "out is null");
  check_indices(index, n, m, what);
  if (n == 0 || m == 0 || d == 0) return;

  // The geometry: the smallest and largest effective field of the finite nonzero values.
  int bottom = detail::scatter_format<R>::max_field + 1, top = 0;
  for (std::uint64_t t = 0; t < n * d; ++t) {
    const int f = detail::effective_field<R>(bits_in_range_format<R>(source[t]));
    if (f != 0) {
      bottom = std::min(bottom, f);
      top = std::max(top, f);
    }
  }
  const detail::scatter_geometry g = detail::make_geometry(bottom, top, detail::level_width<R>(n));
  std::vector<std::uint16_t> table(std::size_t(detail::scatter_format<R>::max_field) + 1, 0);
  for (int f = g.bottom; f <= g.top; ++f) table[std::size_t(f)] = detail::level_entry(g, f);

  const unsigned threads = detail::resolve_threads(options);
  const std::uint64_t chunks = std::min<std::uint64_t>(m, std::uint64_t(threads) * 4);
  detail::parallel_for_chunks(std::size_t(chunks), options, [&](std::size_t chunk) {
    const std::uint64_t r0 = m * chunk / chunks, r1 = m * (chunk + 1) / chunks;
    const std::uint64_t rows = r1 - r0, count = rows * d;
    // Level j of slot (r, c) at words[j * count + (r - r0) * d + c].
    std::vector<word> words(std::size_t(count) * std::size_t(g.levels), word{});
    std::vector<std::uint32_t> flags(std::size_t(count), 0);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t r = std::uint64_t(index[i]);
      if (r < r0 || r >= r1) continue;
      const T* row = source + i * d;
      const std::uint64_t slot0 = (r - r0) * d;
      for (std::uint64_t c = 0; c < d; ++c) {
        const auto parts = detail::split_bits<R>(bits_in_range_format<R>(row[c]));
        const bool finite_nonzero =
            parts.field <= detail::scatter_format<R>::max_field && (parts.field != 0 || parts.fraction != 0);
        if (!finite_nonzero) {
          flags[slot0 + c] |= detail::special_flags<R>(parts);
          continue;
        }
        const int f = parts.field == 0 ? 1 : parts.field;
        const std::uint16_t entry = table[std::size_t(f)];
        flags[slot0 + c] |= detail::slot_not_only_negative_zero;
        detail::add_word<R>(words[std::size_t((entry >> 8) * count + slot0 + c)],
                            detail::term_word<R>(parts, entry & 0xff));
      }
    }
    for (std::uint64_t s = 0; s < count; ++s) {
      R* o = out + r0 * d + s;
      *o = detail::slot_result<R>(words.data() + s, count, g, *o, flags[std::size_t(s)]);
    }
  });
}

template <class T, class I>
void check_offsets(const I* offsets, std::uint64_t segments, const char* what) {
  if (offsets == nullptr) detail::throw_invalid(what, "offsets is null");
  if (offsets[0] < 0) detail::throw_invalid(what, "offsets[0] is negative");
  for (std::uint64_t s = 0; s < segments; ++s)
    if (offsets[s + 1] < offsets[s])
      detail::throw_invalid(what, "offsets[" + std::to_string(s + 1) + "] < offsets[" + std::to_string(s) + "]");
}

// One segment's sum by `method` (tree or exact; checked by the caller).
template <class T>
scatter_output_t<T> segment_value(const T* x, std::uint64_t len, sum_method method) {
  using R = scatter_output_t<T>;
  if (method == sum_method::exact) {
    exact_accumulator<R> acc;
    acc.add(x, len);
    return acc.template rounded<R>();
  }
  using Acc = plain_accumulator<R>;
  return canonicalize_nan(canonical_row_root<Acc>(x, len, widened_leaf<Acc>{}).result());
}

void check_method(sum_method method, const char* what) {
  if (method != sum_method::tree && method != sum_method::exact)
    detail::throw_invalid(what, "method must be sum_method::tree or sum_method::exact");
}

template <class T, class I>
void segments_by_offsets(const T* values, const I* offsets, scatter_output_t<T>* out, std::uint64_t segments,
                         sum_method method, const cpu_options& options) {
  if (segments == 0) return;
  const std::uint64_t chunks = std::min<std::uint64_t>(segments, 4 * std::uint64_t(detail::resolve_threads(options)));
  detail::parallel_for_chunks(std::size_t(chunks), options, [&](std::size_t chunk) {
    for (std::uint64_t s = segments * chunk / chunks; s < segments * (chunk + 1) / chunks; ++s)
      out[s] = segment_value(values + offsets[s], std::uint64_t(offsets[s + 1] - offsets[s]), method);
  });
}

}  // namespace

template <floating_input T, scatter_index I>
void scatter_add(const T* values, const I* index, scatter_output_t<T>* out, std::uint64_t n, std::uint64_t m,
                 const cpu_options& options) {
  scatter_rows(values, index, out, n, m, 1, options, "scatter_add");
}

template <floating_input T, scatter_index I>
void index_add(const T* source, const I* index, scatter_output_t<T>* out, std::uint64_t n, std::uint64_t m,
               std::uint64_t d, const cpu_options& options) {
  scatter_rows(source, index, out, n, m, d, options, "index_add");
}

template <floating_input T, scatter_index I>
void segment_sum(const T* values, const I* offsets, scatter_output_t<T>* out, std::uint64_t segments, sum_method method,
                 const cpu_options& options) {
  check_method(method, "segment_sum");
  check_offsets<T>(offsets, segments, "segment_sum");
  if (segments > 0 && out == nullptr) detail::throw_invalid("segment_sum", "out is null");
  if (segments > 0 && offsets[segments] > offsets[0] && values == nullptr)
    detail::throw_invalid("segment_sum", "values is null");
  segments_by_offsets(values, offsets, out, segments, method, options);
}

template <floating_input T, scatter_index I>
void reduce_by_key(const I* keys, const T* values, I* unique_keys, scatter_output_t<T>* sums, std::uint64_t* run_count,
                   std::uint64_t n, sum_method method, const cpu_options& options) {
  check_method(method, "reduce_by_key");
  if (run_count == nullptr) detail::throw_invalid("reduce_by_key", "run_count is null");
  if (n > 0 && (keys == nullptr || values == nullptr || unique_keys == nullptr || sums == nullptr))
    detail::throw_invalid("reduce_by_key", "keys, values, unique_keys or sums is null");
  std::vector<std::uint64_t> offsets{0};
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i + 1 == n || keys[i + 1] != keys[i]) {
      unique_keys[offsets.size() - 1] = keys[i];
      offsets.push_back(i + 1);
    }
  }
  *run_count = offsets.size() - 1;
  segments_by_offsets(values, offsets.data(), sums, offsets.size() - 1, method, options);
}

#define DETRED_SCATTER_INSTANTIATE(T, I)                                                                               \
  template void scatter_add<T, I>(const T*, const I*, scatter_output_t<T>*, std::uint64_t, std::uint64_t,              \
                                  const cpu_options&);                                                                 \
  template void index_add<T, I>(const T*, const I*, scatter_output_t<T>*, std::uint64_t, std::uint64_t, std::uint64_t, \
                                const cpu_options&);                                                                   \
  template void segment_sum<T, I>(const T*, const I*, scatter_output_t<T>*, std::uint64_t, sum_method,                 \
                                  const cpu_options&);                                                                 \
  template void reduce_by_key<T, I>(const I*, const T*, I*, scatter_output_t<T>*, std::uint64_t*, std::uint64_t,       \
                                    sum_method, const cpu_options&);
#define DETRED_SCATTER_INSTANTIATE_TYPE(T) \
  DETRED_SCATTER_INSTANTIATE(T, std::int32_t) DETRED_SCATTER_INSTANTIATE(T, std::int64_t)
DETRED_SCATTER_INSTANTIATE_TYPE(half)
DETRED_SCATTER_INSTANTIATE_TYPE(bfloat16)
DETRED_SCATTER_INSTANTIATE_TYPE(float)
DETRED_SCATTER_INSTANTIATE_TYPE(double)

}  // namespace detred

// detred-audit's input and output files at the system level: which file a path names (device and inode), reading a
// file with bounded memory, and checking that an output path can be written before the audit starts.
//
// Memory: a regular file is mapped read-only (its size known from fstat), so the readers decode from the page cache
// and the tool holds one copy of the data, the decoded values. A stream (pipe, character device, or a file whose
// size the system does not know, as /proc reports 0) is read into memory up to a limit (--stream-limit, default
// 1 GiB); a longer stream is an error naming the offset, not a std::bad_alloc.
#pragma once

#include <sys/types.h>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace detred::audit {

// The file a path names, symlinks followed: equal identities are the same file (hard links included).
struct file_identity {
  dev_t device = 0;
  ino_t inode = 0;
  bool operator==(const file_identity&) const = default;
};

// The identity of `path`, or nullopt when it does not exist (or cannot be examined).
std::optional<file_identity> identity_of(const std::string& path);

// Default cap on what is read from a stream: 1 GiB.
inline constexpr std::uint64_t default_stream_limit = std::uint64_t(1) << 30;

// An open input file. Errors (file missing, a directory, read errors, a stream over the limit) throw file_error with
// a one-line message naming the path. Not thread-safe (one owner).
class input_file {
 public:
  input_file(const std::string& path, std::uint64_t stream_limit);
  ~input_file();
  input_file(const input_file&) = delete;
  input_file& operator=(const input_file&) = delete;

  // At least the first `count` bytes (fewer only at the end of the file), reading no more of a stream than needed.
  std::span<const std::byte> head(std::size_t count);
  // The whole file.
  std::span<const std::byte> all();

 private:
  void read_stream_until(std::uint64_t count);

  std::string path_;
  std::uint64_t limit_;
  int fd_ = -1;
  const std::byte* mapped_ = nullptr;  // a regular file of known size, mapped
  std::size_t mapped_size_ = 0;
  std::vector<std::byte> buffer_;  // a stream, read so far
  bool at_end_ = false;
};

struct file_error {
  std::string message;
};

// Throws file_error unless `path` can be written: an existing file writable, or a new one creatable in its
// directory. Creates and changes nothing.
void check_writable(const std::string& option, const std::string& path);

}  // namespace detred::audit

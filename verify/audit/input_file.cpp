#include "input_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace detred::audit {

namespace {

std::string system_error_text() { return std::strerror(errno); }

}  // namespace

std::optional<file_identity> identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return file_identity{st.st_dev, st.st_ino};
}

input_file::input_file(const std::string& path, std::uint64_t stream_limit) : path_(path), limit_(stream_limit) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw file_error{path + ": cannot open the file (" + system_error_text() + ")"};
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw file_error{path + ": cannot examine the file (" + system_error_text() + ")"};
  if (S_ISDIR(st.st_mode)) throw file_error{path + ": is a directory, not a data file"};
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    mapped_size_ = static_cast<std::size_t>(st.st_size);
    void* p = ::mmap(nullptr, mapped_size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) throw file_error{path + ": cannot map the file (" + system_error_text() + ")"};
    mapped_ = static_cast<const std::byte*>(p);
  }
}

input_file::~input_file() {
  if (mapped_) ::munmap(const_cast<std::byte*>(mapped_), mapped_size_);
  if (fd_ >= 0) ::close(fd_);
}

void input_file::read_stream_until(std::uint64_t count) {
  while (!at_end_ && buffer_.size() < count) {
    const std::size_t chunk = 1 << 20;
    const std::size_t old = buffer_.size();
    if (buffer_.capacity() < old + chunk) buffer_.reserve(std::max<std::size_t>(2 * buffer_.capacity(), old + chunk));
    buffer_.resize(old + chunk);
    ssize_t got;
    do {
      got = ::read(fd_, buffer_.data() + old, chunk);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
      buffer_.resize(old);
      throw file_error{path_ + ": offset " + std::to_string(old) + ": read error (" + system_error_text() + ")"};
    }
    buffer_.resize(old + static_cast<std::size_t>(got));
    if (got == 0) at_end_ = true;
    if (buffer_.size() > limit_)
      throw file_error{path_ + ": offset " + std::to_string(limit_) +
                       ": the input stream is longer than the limit of " + std::to_string(limit_) +
                       " bytes (--stream-limit; regular files have no limit)"};
  }
}

std::span<const std::byte> input_file::head(std::size_t count) {
  if (mapped_) return {mapped_, std::min(count, mapped_size_)};
  read_stream_until(count);
  return {buffer_.data(), std::min(count, buffer_.size())};
}

std::span<const std::byte> input_file::all() {
  if (mapped_) return {mapped_, mapped_size_};
  read_stream_until(UINT64_MAX);
  return {buffer_.data(), buffer_.size()};
}

void check_writable(const std::string& option, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw file_error{option + " " + path + ": is a directory"};
    if (::access(path.c_str(), W_OK) != 0)
      throw file_error{option + " " + path + ": cannot write the file (" + system_error_text() + ")"};
    return;
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw file_error{option + " " + path + ": cannot create the file in " + dir.string() + " (" + system_error_text() +
                     ")"};
}

}  // namespace detred::audit

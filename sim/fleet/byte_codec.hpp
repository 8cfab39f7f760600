// SPDX-License-Identifier: GPL-3.0-or-later
// Plain values and vectors as bytes, for MPI messages between ranks (curve_codec.hpp,
// fleet_walk_codec.hpp).
//
// Format: values in the order written, native byte order and float formats (every rank
// runs the same build on the same architecture: the bytes of a float are its value),
// strings and vectors prefixed by a u64 element count. Reading past the end, or leaving
// bytes unread (finish), throws std::runtime_error naming the message.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace dnsarena::sim::fleet {

class Writer {
public:
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    pod(static_cast<std::uint64_t>(s.size()));
    out_ += s;
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    pod(static_cast<std::uint64_t>(v.size()));
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string take() { return std::move(out_); }

private:
  std::string out_;
};

class Reader {
public:
  Reader(const std::string& in, const char* what) : in_(in), what_(what) {}
  template <class T>
  T pod() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  std::string str() {
    const auto n = pod<std::uint64_t>();
    return std::string(take(n), n);
  }
  template <class T>
  std::vector<T> vec() {
    const auto n = pod<std::uint64_t>();
    if (n > in_.size() / sizeof(T)) fail();
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));  // an empty vector's data() may be null
    return v;
  }
  void finish() const {
    if (at_ != in_.size()) throw std::runtime_error(std::string(what_) + " message: " + std::to_string(in_.size() - at_) + " bytes left over");
  }

private:
  const char* take(std::size_t n) {
    if (n > in_.size() - at_) fail();
    const char* p = in_.data() + at_;
    at_ += n;
    return p;
  }
  [[noreturn]] void fail() const {
    throw std::runtime_error(std::string(what_) + " message truncated (" + std::to_string(in_.size()) + " bytes)");
  }
  const std::string& in_;
  const char* what_;
  std::size_t at_ = 0;
};

}  // namespace dnsarena::sim::fleet

// SPDX-License-Identifier: GPL-3.0-or-later
#include "name_compressor.hpp"

#include <cstring>

#include "dns_name.hpp"

namespace dnsarena::wire {

void NameCompressor::add(std::size_t offset) {
  std::size_t p = offset;
  while (msg_[p] != 0 && (msg_[p] & 0xC0) == 0) {
    if (p > kMaxPointerOffset || count_ == kMaxTargets) return;
    targets_[count_++] = static_cast<std::uint16_t>(p);
    p += msg_[p] + 1u;
  }
}

bool NameCompressor::equals_at(std::size_t offset, const std::uint8_t* name) const {
  std::size_t p = offset;
  for (int hops = 0;;) {
    const std::uint8_t len = msg_[p];
    if ((len & 0xC0) == 0xC0) {
      if (++hops > 127) return false;  // cannot happen for names we wrote; bounds the walk
      p = (std::size_t{len & 0x3Fu} << 8) | msg_[p + 1];
      continue;
    }
    if (len != *name) return false;
    if (len == 0) return true;
    for (std::size_t k = 1; k <= len; ++k)
      if (ascii_lower(msg_[p + k]) != ascii_lower(name[k])) return false;
    p += len + 1u;
    name += len + 1u;
  }
}

int NameCompressor::find(const std::uint8_t* suffix) const {
  for (int i = 0; i < count_; ++i)
    if (msg_[targets_[i]] == suffix[0] && equals_at(targets_[i], suffix)) return targets_[i];
  return -1;
}

std::size_t NameCompressor::write(std::span<const std::uint8_t> name, std::size_t offset) {
  std::uint8_t* const at = msg_ + offset;
  std::size_t i = 0;
  while (name[i] != 0) {
    const int target = find(name.data() + i);
    if (target >= 0) {
      std::memcpy(at, name.data(), i);
      at[i] = static_cast<std::uint8_t>(0xC0 | (target >> 8));
      at[i + 1] = static_cast<std::uint8_t>(target);
      add(offset);
      return i + 2;
    }
    i += name[i] + 1u;
  }
  std::memcpy(at, name.data(), name.size());
  add(offset);
  return name.size();
}

std::size_t NameCompressor::write_rdata(std::uint16_t type, std::span<const std::uint8_t> rdata, std::size_t offset) {
  const CompressibleRdata shape = compressible_rdata(type);
  std::size_t name_bytes[2] = {0, 0};
  bool names_parse = shape.names > 0;
  std::size_t at = shape.prefix;
  for (unsigned i = 0; i < shape.names && names_parse; ++i) {
    name_bytes[i] = at < rdata.size() ? wire_name_length(rdata.subspan(at)) : 0;
    names_parse = name_bytes[i] != 0;
    at += name_bytes[i];
  }
  if (!names_parse) {
    if (!rdata.empty()) std::memcpy(msg_ + offset, rdata.data(), rdata.size());
    return rdata.size();
  }
  std::size_t w = offset;
  std::memcpy(msg_ + w, rdata.data(), shape.prefix);
  w += shape.prefix;
  std::size_t src = shape.prefix;
  for (unsigned i = 0; i < shape.names; ++i) {
    w += write(rdata.subspan(src, name_bytes[i]), w);
    src += name_bytes[i];
  }
  std::memcpy(msg_ + w, rdata.data() + src, rdata.size() - src);
  w += rdata.size() - src;
  return w - offset;
}

}  // namespace dnsarena::wire

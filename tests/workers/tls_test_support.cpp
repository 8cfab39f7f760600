// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/workers/tls_test_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "tests/workers/serve_harness.hpp"
#include "workers/tls_credentials.hpp"

namespace dnsarena::test {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TestCertificate::TestCertificate(const std::string& name) {
  char tmpl[] = "/tmp/dnsarena-tls-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  cert_ = dir_ + "/cert.pem";
  key_ = dir_ + "/key.pem";
  std::ofstream(dir_ + "/template") << "cn = \"" << name << "\"\ndns_name = \"" << name
                                    << "\"\nexpiration_days = 2\ntls_www_server\nsigning_key\n";
  int status = -1;
  const std::string out =
      run_command("certtool --generate-privkey --key-type=ecdsa --outfile " + key_ + " 2>&1 && certtool "
                  "--generate-self-signed --load-privkey " + key_ + " --template " + dir_ + "/template --outfile " +
                  cert_ + " 2>&1",
                  &status);
  if (status != 0) throw std::runtime_error("certtool (gnutls-bin) failed: " + out);
}

TestCertificate::~TestCertificate() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string TestCertificate::fingerprint() const {
  const std::string pem = read_file(cert_);
  gnutls_datum_t in{reinterpret_cast<unsigned char*>(const_cast<char*>(pem.data())), static_cast<unsigned>(pem.size())};
  gnutls_datum_t der{};
  if (gnutls_pem_base64_decode2("CERTIFICATE", &in, &der) != 0) return "";
  const std::string fp = workers::certificate_fingerprint(der);
  gnutls_free(der.data);
  return fp;
}

void TestCertificate::install(const std::string& cert, const std::string& key) const {
  std::filesystem::copy_file(cert_, cert, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(key_, key, std::filesystem::copy_options::overwrite_existing);
}

int connect_tcp(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

TlsClient::TlsClient(std::uint16_t port, const std::vector<std::uint8_t>& resume, std::chrono::milliseconds timeout,
                     const char* alpn_name)
    : timeout_(timeout) {
  fd_ = connect_tcp(port);
  if (fd_ < 0) return;
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  gnutls_certificate_allocate_credentials(&cred_);
  gnutls_init(&session_, GNUTLS_CLIENT);
  gnutls_set_default_priority(session_);
  gnutls_credentials_set(session_, GNUTLS_CRD_CERTIFICATE, cred_);
  gnutls_datum_t alpn{reinterpret_cast<unsigned char*>(const_cast<char*>(alpn_name)),
                      static_cast<unsigned>(std::strlen(alpn_name))};
  gnutls_alpn_set_protocols(session_, &alpn, 1, 0);
  if (!resume.empty()) {
    gnutls_session_set_data(session_, resume.data(), resume.size());
  }
  gnutls_transport_set_int(session_, fd_);
  gnutls_handshake_set_timeout(session_, static_cast<unsigned>(timeout.count()));
  gnutls_record_set_timeout(session_, static_cast<unsigned>(timeout.count()));
  int rc;
  do rc = gnutls_handshake(session_);
  while (rc < 0 && !gnutls_error_is_fatal(rc));
  ok_ = rc == 0;
}

TlsClient::~TlsClient() {
  if (session_) gnutls_deinit(session_);
  if (cred_) gnutls_certificate_free_credentials(cred_);
  if (fd_ >= 0) ::close(fd_);
}

bool TlsClient::resumed() const { return ok_ && gnutls_session_is_resumed(session_) != 0; }

std::string TlsClient::alpn() const {
  gnutls_datum_t p{};
  if (!ok_ || gnutls_alpn_get_selected_protocol(session_, &p) != 0) return "";
  return {reinterpret_cast<const char*>(p.data), p.size};
}

std::string TlsClient::peer_fingerprint() const {
  unsigned n = 0;
  const gnutls_datum_t* certs = ok_ ? gnutls_certificate_get_peers(session_, &n) : nullptr;
  return certs && n ? workers::certificate_fingerprint(certs[0]) : "";
}

std::vector<std::uint8_t> TlsClient::session_data() const {
  gnutls_datum_t d{};
  if (!ok_ || gnutls_session_get_data2(session_, &d) != 0) return {};
  std::vector<std::uint8_t> v(d.data, d.data + d.size);
  gnutls_free(d.data);
  return v;
}

bool TlsClient::send(const std::vector<std::uint8_t>& msg) {
  if (!ok_) return false;
  std::vector<std::uint8_t> framed{static_cast<std::uint8_t>(msg.size() >> 8), static_cast<std::uint8_t>(msg.size())};
  framed.insert(framed.end(), msg.begin(), msg.end());
  std::size_t done = 0;
  while (done < framed.size()) {
    const ssize_t w = gnutls_record_send(session_, framed.data() + done, framed.size() - done);
    if (w < 0 && !gnutls_error_is_fatal(static_cast<int>(w))) continue;
    if (w <= 0) return false;
    done += static_cast<std::size_t>(w);
  }
  return true;
}

bool TlsClient::send_raw(const std::uint8_t* p, std::size_t n) {
  if (!ok_) return false;
  std::size_t done = 0;
  while (done < n) {
    const ssize_t w = gnutls_record_send(session_, p + done, n - done);
    if (w == GNUTLS_E_INTERRUPTED) continue;
    if (w <= 0) return false;  // GNUTLS_E_AGAIN too: the socket's SO_SNDTIMEO passed
    done += static_cast<std::size_t>(w);
  }
  return true;
}

long TlsClient::receive_raw(std::uint8_t* p, std::size_t n, std::chrono::milliseconds wait) {
  if (!ok_) return -1;
  if (gnutls_record_check_pending(session_) == 0) {
    pollfd pfd{fd_, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(wait.count())) == 0) return 0;
  }
  for (;;) {
    const ssize_t r = gnutls_record_recv(session_, p, n);
    if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) continue;
    if (r == GNUTLS_E_TIMEDOUT) return 0;
    return r > 0 ? static_cast<long>(r) : -1;
  }
}

bool TlsClient::read_exact(std::uint8_t* p, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = gnutls_record_recv(session_, p + done, n - done);
    if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED) continue;
    if (r <= 0) return false;  // EOF, timeout (GNUTLS_E_TIMEDOUT) or an error
    done += static_cast<std::size_t>(r);
  }
  return true;
}

std::vector<std::uint8_t> TlsClient::receive() {
  std::uint8_t len[2];
  if (!ok_ || !read_exact(len, 2)) return {};
  std::vector<std::uint8_t> msg((std::size_t{len[0]} << 8) | len[1]);
  if (!read_exact(msg.data(), msg.size())) return {};
  return msg;
}

std::uint16_t message_id(const std::vector<std::uint8_t>& wire) {
  return wire.size() >= 2 ? static_cast<std::uint16_t>((wire[0] << 8) | wire[1]) : 0;
}

std::vector<std::pair<std::uint16_t, std::uint16_t>> opt_options(const std::vector<std::uint8_t>& w) {
  auto u16 = [&](std::size_t at) { return static_cast<std::uint16_t>((w[at] << 8) | w[at + 1]); };
  auto skip_name = [&](std::size_t at) {
    while (at < w.size()) {
      if (w[at] == 0) return at + 1;
      if ((w[at] & 0xC0) == 0xC0) return at + 2;
      at += 1 + w[at];
    }
    return w.size() + 1;
  };
  std::vector<std::pair<std::uint16_t, std::uint16_t>> out;
  if (w.size() < 12) return out;
  std::size_t at = 12;
  for (unsigned i = 0; i < u16(4); ++i) at = skip_name(at) + 4;
  const unsigned rrs = u16(6) + u16(8) + u16(10);
  for (unsigned i = 0; i < rrs && at < w.size(); ++i) {
    at = skip_name(at);
    if (at + 10 > w.size()) break;
    const std::uint16_t type = u16(at), rdlen = u16(at + 8);
    if (type == 41)
      for (std::size_t o = at + 10; o + 4 <= at + 10 + rdlen && o + 4 <= w.size(); o += 4 + u16(o + 2))
        out.emplace_back(u16(o), u16(o + 2));
    at += 10 + rdlen;
  }
  return out;
}

}  // namespace dnsarena::test

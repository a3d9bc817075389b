// The connection guard (see the header).
// Leaves out: finding sockets on systems without /proc/self/fd (Linux only, as heed serve).
#include "heed/serve/connection_guard.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace heed::serve {
namespace {

using Clock = std::chrono::steady_clock;

// The guard and descriptor of the connection this thread serves (set while its closure runs).
thread_local ConnectionGuard* tl_guard = nullptr;
thread_local int tl_fd = -1;
thread_local uint64_t tl_id = 0;

int port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&a)->sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&a)->sin6_port);
  return -1;
}

// "address:port" of a socket's peer ("" when it has none).
std::string peer_of(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  char host[INET6_ADDRSTRLEN] = "";
  const void* addr =
      a.ss_family == AF_INET
          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&a)->sin_addr)
          : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr);
  ::inet_ntop(a.ss_family, addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(port_of(a));
}

// f(fd, listening, local port) for each socket this process has open (from /proc/self/fd).
template <class F>
void for_each_socket(F&& f) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long n = std::strtol(e->d_name, &end, 10);
    const int fd = static_cast<int>(n);
    if (end == e->d_name || *end != '\0' || fd == ::dirfd(dir)) continue;
    int listening = 0;
    socklen_t len = sizeof listening;
    sockaddr_storage a{};
    socklen_t alen = sizeof a;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &alen) != 0)
      continue;
    f(fd, listening != 0, port_of(a));
  }
  ::closedir(dir);
}

// The answer of a connection over the cap, whole.
std::string refusal() {
  const std::string body = R"({"error": "too many connections open; retry later"})";
  return "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\n"
         "Content-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// The task queue cpp-httplib owns (and deletes once it has stopped): the guard's, forwarded.
class ForwardingQueue : public httplib::TaskQueue {
 public:
  explicit ForwardingQueue(std::shared_ptr<ConnectionGuard> guard) : guard_(std::move(guard)) {}
  void enqueue(std::function<void()> fn) override { guard_->enqueue(std::move(fn)); }
  void shutdown() override { guard_->shutdown(); }

 private:
  std::shared_ptr<ConnectionGuard> guard_;
};

}  // namespace

ConnectionGuard::ConnectionGuard(ConnectionLimits limits)
    : limits_(limits), pool_(std::make_unique<httplib::ThreadPool>(limits.threads)) {
  watchdog_ = std::thread([this] { watch(); });
}

void ConnectionGuard::listen_on(int port) {
  const std::lock_guard lock(mu_);
  port_ = port;
  // cpp-httplib listens with a backlog of 5 (Debian's compiled library ignores
  // CPPHTTPLIB_LISTEN_BACKLOG): 64 clients connecting at once saw connections reset. Linux
  // applies a second listen() to a listening socket's backlog: the server's own socket (this
  // process's listening socket on `port`) is given the system's maximum.
  for_each_socket([&](int fd, bool listening, int local_port) {
    if (listening && local_port == port) ::listen(fd, SOMAXCONN);
  });
}

ConnectionGuard::~ConnectionGuard() {
  shutdown();
}

httplib::TaskQueue* ConnectionGuard::queue() {
  return new ForwardingQueue(shared_from_this());
}

int ConnectionGuard::find_new_socket() {
  int found = -1;
  for_each_socket([&](int fd, bool listening, int local_port) {
    if (listening || local_port != port_) return;  // a connection to the server's port only
    const auto known = conns_.find(fd);
    // a descriptor we know, unless closed and reused since (another peer; one with no peer any
    // more is ours, shut down and not yet closed: a new connection has its peer)
    if (known != conns_.end()) {
      const std::string peer = peer_of(fd);
      if (peer.empty() || peer == known->second.peer) return;
    }
    found = fd;
  });
  return found;
}

void ConnectionGuard::enqueue(std::function<void()> fn) {
  int fd = -1;
  uint64_t id = 0;
  {
    const std::lock_guard lock(mu_);
    fd = find_new_socket();
    if (fd >= 0 && conns_.size() >= limits_.max_open) {
      // at the cap: a 503 and the socket shut down; the closure still runs (and closes it)
      static const std::string answer = refusal();
      static_cast<void>(::send(fd, answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL));
      ::shutdown(fd, SHUT_RDWR);
      fd = -1;
    } else if (fd >= 0) {  // its header deadline starts with its thread (a queued one waits)
      id = next_id_++;
      conns_[fd] = {id, peer_of(fd), Clock::time_point::max(), false};
    }
  }
  cv_.notify_all();
  pool_->enqueue([this, fd, id, fn = std::move(fn)] {
    tl_guard = this;
    tl_fd = fd;
    tl_id = id;
    arm(fd, id, limits_.header, false);
    fn();  // serves the connection and closes its socket
    tl_guard = nullptr;
    tl_fd = -1;
    tl_id = 0;
    if (fd < 0) return;
    const std::lock_guard lock(mu_);
    // (the descriptor may already be a new connection's: only this connection's entry goes)
    const auto it = conns_.find(fd);
    if (it != conns_.end() && it->second.id == id) conns_.erase(it);
  });
}

void ConnectionGuard::arm(int fd, uint64_t id, std::chrono::milliseconds in, bool in_request) {
  if (fd < 0) return;
  {
    const std::lock_guard lock(mu_);
    const auto it = conns_.find(fd);
    if (it == conns_.end() || it->second.id != id) return;
    it->second.deadline = in.count() > 0 ? Clock::now() + in : Clock::time_point::max();
    it->second.in_request = in_request;
  }
  cv_.notify_all();
}

void ConnectionGuard::headers_received() {
  if (tl_guard != nullptr) tl_guard->arm(tl_fd, tl_id, tl_guard->limits_.body, true);
}
void ConnectionGuard::body_read() {
  if (tl_guard != nullptr) tl_guard->arm(tl_fd, tl_id, std::chrono::milliseconds(0), true);
}
void ConnectionGuard::answer_sent() {
  if (tl_guard != nullptr) tl_guard->arm(tl_fd, tl_id, tl_guard->limits_.header, false);
}

void ConnectionGuard::cut(int fd, Conn& c) {
  if (peer_of(fd) == c.peer) ::shutdown(fd, SHUT_RDWR);
  c.deadline = Clock::time_point::max();
}

void ConnectionGuard::shutdown_waiting() {
  const std::lock_guard lock(mu_);
  for (auto& [fd, c] : conns_)
    if (!c.in_request) cut(fd, c);
}

void ConnectionGuard::watch() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto next = Clock::time_point::max();
    const auto now = Clock::now();
    for (auto& [fd, c] : conns_) {
      if (c.deadline <= now) cut(fd, c);  // its thread's read ends; cpp-httplib closes it
      next = std::min(next, c.deadline);
    }
    if (next == Clock::time_point::max())
      cv_.wait(lock);
    else
      cv_.wait_until(lock, next);
  }
}

void ConnectionGuard::shutdown() {
  {
    const std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  pool_->shutdown();
}

}  // namespace heed::serve

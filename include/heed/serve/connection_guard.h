// The connections of heed serve, guarded: at most `max_open` at once (one more is answered 503
// and closed), and each given `header_ms` to send its request line and headers and `body_ms` its
// body, or its socket is shut down. Clients sending a byte a second can then neither hold the
// HTTP threads (140 of them once made /health time out for everyone) nor SIGTERM's exit
// (shutdown_waiting() closes every connection that is not inside a request).
//
// cpp-httplib 0.11, Debian's compiled library, serves each connection on a thread of its task
// queue until the client is done, with a timeout per read only (a trickle never trips it), and
// hands the task queue nothing but a closure. ConnectionGuard runs that task queue (queue(): the
// one cpp-httplib owns forwards to the guard, which the server owns): as a
// connection is queued it finds its socket (the one socket to the server's port that it does not
// already know, by its peer) and runs the closure on a ThreadPool, the header deadline armed as
// the closure starts (time in the queue is not the client's); a
// watchdog thread shuts down sockets past their deadline. The server tells it, on the
// connection's own thread, when headers have arrived (armed for the body), when the body is read
// (disarmed: decoding has its own timeout) and when an answer is sent (armed for the next
// request's headers, keep-alive's idle wait included).
// Leaves out: TLS, and HTTP/2 (cpp-httplib serves neither here).
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace heed::serve {

struct ConnectionLimits {
  size_t threads = 128;    // connections served at once (the others wait in the queue)
  size_t max_open = 1024;  // connections open at once, waiting ones included
  std::chrono::milliseconds header{10000};  // request line and headers, from connect or answer
  std::chrono::milliseconds body{60000};    // the body, from its headers
};

class ConnectionGuard : public std::enable_shared_from_this<ConnectionGuard> {
 public:
  explicit ConnectionGuard(ConnectionLimits limits);
  // The server's port, once bound (before the first connection); its listening socket's
  // backlog is raised to the system's maximum (cpp-httplib's is 5).
  void listen_on(int port);
  ~ConnectionGuard();
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  // What httplib::Server::new_task_queue returns: a queue forwarding to this guard.
  httplib::TaskQueue* queue();
  void enqueue(std::function<void()> fn);  // a new connection (cpp-httplib's accept)
  void shutdown();                         // the server has stopped: join the threads

  // On the connection's thread, as its request goes on (no-ops on any other thread):
  static void headers_received();  // armed for the body
  static void body_read();         // disarmed
  static void answer_sent();       // armed for the next request's headers
  // Every connection waiting for a request (not inside one) shut down: for SIGTERM.
  void shutdown_waiting();

 private:
  struct Conn {
    uint64_t id = 0;                                 // this connection's, never reused
    std::string peer;                                // what tells a reused descriptor apart
    std::chrono::steady_clock::time_point deadline;  // max(): none
    bool in_request = false;                         // headers in, answer not yet sent
  };
  int find_new_socket();  // under mu_
  void arm(int fd, uint64_t id, std::chrono::milliseconds in, bool in_request);
  // Shuts down `fd` if it is still connection c's (a descriptor closed and reused since by a
  // new connection is left alone); under mu_.
  static void cut(int fd, Conn& c);
  void watch();

  ConnectionLimits limits_;
  int port_ = -1;
  std::unique_ptr<httplib::ThreadPool> pool_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<int, Conn> conns_;  // by descriptor
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  std::thread watchdog_;
};

}  // namespace heed::serve

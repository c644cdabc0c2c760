// TLS 1.3 resumption within a scope (tls_resumption.hpp). OpenSSL calls back with the connection's
// SSL object; each connection carries its binding (scope or ticket slot) in ex_data, freed with it.
#include "pqot/channel/tls_resumption.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <ctime>
#include <stdexcept>

#include "pqot/crypto/random.hpp"

namespace pqot::channel {

namespace {

// What a server connection may do with its scope: issue tickets into it (the scope's own
// connection) or resume from it (a connection bound to the scope). `refused`: the client offered
// a ticket the scope does not hold.
struct ScopeBinding {
  std::shared_ptr<ResumptionScope> scope;
  bool issue = false;
  bool accept = false;
  bool refused = false;
};

void free_scope_binding(void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) {
  delete static_cast<ScopeBinding*>(ptr);
}
void free_slot_binding(void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) {
  delete static_cast<std::shared_ptr<TicketSlot>*>(ptr);
}

int ex_index(CRYPTO_EX_free* free_fn) {
  const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, free_fn);
  if (index < 0) throw std::runtime_error("TLS: no ex_data index for resumption");
  return index;
}
int scope_index() {
  static const int index = ex_index(free_scope_binding);
  return index;
}
int slot_index() {
  static const int index = ex_index(free_slot_binding);
  return index;
}

ScopeBinding* scope_binding(SSL* ssl) { return static_cast<ScopeBinding*>(SSL_get_ex_data(ssl, scope_index())); }

ScopeBinding& bind_scope(SSL* ssl, std::shared_ptr<ResumptionScope> scope) {
  ScopeBinding* b = scope_binding(ssl);
  if (b == nullptr) {
    auto owned = std::make_unique<ScopeBinding>();
    if (SSL_set_ex_data(ssl, scope_index(), owned.get()) != 1) {
      ERR_clear_error();
      throw std::runtime_error("TLS: cannot bind a connection to its resumption scope");
    }
    b = owned.release();  // freed with the SSL (free_scope_binding)
  }
  if (b->scope && b->scope != scope) throw std::logic_error("TLS: connection already bound to another scope");
  b->scope = std::move(scope);
  return *b;
}

// OpenSSL enforces the lifetime too; this keeps expired sessions from being held or offered.
bool expired(const SSL_SESSION* s) {
  return static_cast<long>(std::time(nullptr)) - SSL_SESSION_get_time(s) >= SSL_SESSION_get_timeout(s);
}

}  // namespace

struct ResumptionCallbacks {
  // Server (SSL_CTX_sess_set_new_cb): OpenSSL is writing a NewSessionTicket on `ssl`. Only the
  // scope's own connection, bound by issue(), keeps it; any other ticket names nothing.
  static int server_new_session(SSL* ssl, SSL_SESSION* session) {
    ScopeBinding* b = scope_binding(ssl);
    if (b == nullptr || !b->issue) return 0;
    // A copy of our own, marked with the scope's session id context: OpenSSL resumes it only on
    // a connection carrying the same context (accept_on), a second check beside the lookup.
    SSL_SESSION* copy = SSL_SESSION_dup(session);
    if (copy == nullptr) return 0;
    if (SSL_SESSION_set1_id_context(copy, b->scope->sid_ctx_, sizeof b->scope->sid_ctx_) != 1) {
      SSL_SESSION_free(copy);
      ERR_clear_error();
      return 0;
    }
    b->scope->keep(copy);
    return 0;  // OpenSSL keeps (and later frees) its own reference
  }

  // Server (SSL_CTX_sess_set_get_cb): a ClientHello offers the ticket `id`. Looked up only in the
  // scope bound to this connection by accept_on(); a control connection has none.
  static SSL_SESSION* server_get_session(SSL* ssl, const unsigned char* id, int id_len, int* copy) {
    *copy = 0;  // the session returned is a reference of its own, which OpenSSL frees
    ScopeBinding* b = scope_binding(ssl);
    if (b == nullptr || !b->accept || id_len <= 0) return nullptr;
    SSL_SESSION* found = b->scope->find_copy(id, static_cast<unsigned>(id_len));
    if (found == nullptr) b->refused = true;
    return found;
  }

  // Client (SSL_CTX_sess_set_new_cb): a NewSessionTicket arrived on `ssl`.
  static int client_new_session(SSL* ssl, SSL_SESSION* session) {
    auto* slot = static_cast<std::shared_ptr<TicketSlot>*>(SSL_get_ex_data(ssl, slot_index()));
    if (slot == nullptr) return 0;  // a connection nobody watches: the ticket is dropped
    // A copy: OpenSSL marks a connection's session unresumable when that connection ends without
    // close_notify, which must not spoil the ticket for the next one.
    if (SSL_SESSION* c = SSL_SESSION_dup(session)) (*slot)->hold(c);
    return 0;
  }
};

// ---- server -------------------------------------------------------------------------------------

std::shared_ptr<ResumptionScope> ResumptionScope::create(std::size_t capacity) {
  return std::shared_ptr<ResumptionScope>(new ResumptionScope(capacity));
}

ResumptionScope::ResumptionScope(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {
  crypto::random_bytes(crypto::MutableByteView(sid_ctx_, sizeof sid_ctx_));
}

ResumptionScope::~ResumptionScope() { clear(); }

bool ResumptionScope::issue(SSL* ssl) {
  bind_scope(ssl, shared_from_this()).issue = true;
  if (SSL_new_session_ticket(ssl) != 1) {
    ERR_clear_error();
    return false;
  }
  std::lock_guard lock(mutex_);
  last_issue_ = std::chrono::steady_clock::now();
  return true;
}

void ResumptionScope::accept_on(SSL* ssl) {
  bind_scope(ssl, shared_from_this()).accept = true;
  if (SSL_set_session_id_context(ssl, sid_ctx_, sizeof sid_ctx_) != 1) {
    ERR_clear_error();
    throw std::runtime_error("TLS: cannot set the session id context");
  }
}

std::chrono::steady_clock::duration ResumptionScope::newest_age() const {
  std::lock_guard lock(mutex_);
  if (!last_issue_) return std::chrono::steady_clock::duration::max();
  return std::chrono::steady_clock::now() - *last_issue_;
}

std::size_t ResumptionScope::held() const {
  std::lock_guard lock(mutex_);
  return held_.size();
}

void ResumptionScope::clear() {
  std::lock_guard lock(mutex_);
  for (SSL_SESSION* s : held_) SSL_SESSION_free(s);  // OpenSSL cleanses the secrets
  held_.clear();
}

ResumptionScope::Handshake ResumptionScope::outcome(SSL* ssl) {
  if (SSL_session_reused(ssl) == 1) return Handshake::resumed;
  const ScopeBinding* b = scope_binding(ssl);
  return b != nullptr && b->refused ? Handshake::full_ticket_refused : Handshake::full;
}

void ResumptionScope::keep(SSL_SESSION* copy) {
  std::lock_guard lock(mutex_);
  drop_expired_locked();
  held_.push_back(copy);
  while (held_.size() > capacity_) {
    SSL_SESSION_free(held_.front());
    held_.pop_front();
  }
}

SSL_SESSION* ResumptionScope::find_copy(const unsigned char* id, unsigned id_len) {
  std::lock_guard lock(mutex_);
  drop_expired_locked();
  for (SSL_SESSION* s : held_) {
    unsigned n = 0;
    const unsigned char* sid = SSL_SESSION_get_id(s, &n);
    // Each connection gets a copy: OpenSSL may mark the session of a connection that ends
    // badly as unresumable, which must not reach the held original.
    if (n == id_len && CRYPTO_memcmp(sid, id, n) == 0) return SSL_SESSION_dup(s);
  }
  return nullptr;
}

void ResumptionScope::drop_expired_locked() {
  while (!held_.empty() && expired(held_.front())) {
    SSL_SESSION_free(held_.front());
    held_.pop_front();
  }
}

void enable_scoped_resumption(asio::ssl::context& ctx, std::chrono::seconds lifetime) {
  SSL_CTX* native = ctx.native_handle();
  // TLS 1.3 with SSL_OP_NO_TICKET: stateful tickets, the session stays in memory (in its scope,
  // through the callbacks; OpenSSL's own cache stays unused).
  SSL_CTX_set_options(native, SSL_OP_NO_TICKET);
  SSL_CTX_clear_options(native, SSL_OP_ALLOW_NO_DHE_KEX);  // psk_dhe_ke only: every link its own ECDHE
  SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_SERVER | SSL_SESS_CACHE_NO_INTERNAL);
  SSL_CTX_sess_set_new_cb(native, &ResumptionCallbacks::server_new_session);
  SSL_CTX_sess_set_get_cb(native, &ResumptionCallbacks::server_get_session);
  SSL_CTX_set_timeout(native, static_cast<long>(lifetime.count()));
  // A context for the connections of no scope. OpenSSL requires one to issue resumable sessions
  // when it verifies client certificates; scopes put their own on their sessions and links.
  static constexpr unsigned char kUnscoped[] = "pqot unscoped";
  if (SSL_CTX_set_session_id_context(native, kUnscoped, sizeof kUnscoped - 1) != 1 ||
      SSL_CTX_set_num_tickets(native, 0) != 1 || SSL_CTX_set_max_early_data(native, 0) != 1) {
    ERR_clear_error();
    throw std::runtime_error("TLS: cannot configure session resumption");
  }
}

// ---- client -------------------------------------------------------------------------------------

void enable_ticket_slots(asio::ssl::context& ctx) {
  SSL_CTX* native = ctx.native_handle();
  // The client "cache" is only the callback: each ticket goes to the slot watching its connection.
  SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(native, &ResumptionCallbacks::client_new_session);
}

std::shared_ptr<TicketSlot> TicketSlot::create() { return std::shared_ptr<TicketSlot>(new TicketSlot()); }

TicketSlot::~TicketSlot() {
  if (session_ != nullptr) SSL_SESSION_free(session_);
}

void TicketSlot::watch(SSL* ssl) {
  if (auto* existing = static_cast<std::shared_ptr<TicketSlot>*>(SSL_get_ex_data(ssl, slot_index()))) {
    *existing = shared_from_this();
    return;
  }
  auto owned = std::make_unique<std::shared_ptr<TicketSlot>>(shared_from_this());
  if (SSL_set_ex_data(ssl, slot_index(), owned.get()) != 1) {
    ERR_clear_error();
    throw std::runtime_error("TLS: cannot watch a connection for tickets");
  }
  owned.release();  // freed with the SSL (free_slot_binding)
}

bool TicketSlot::offer(SSL* ssl) const {
  SSL_SESSION* c = copy();
  if (c == nullptr) return false;
  const bool ok = !expired(c) && SSL_set_session(ssl, c) == 1;
  SSL_SESSION_free(c);  // SSL_set_session took a reference of its own
  if (!ok) ERR_clear_error();
  return ok;
}

bool TicketSlot::empty() const {
  std::lock_guard lock(mutex_);
  return session_ == nullptr;
}

SSL_SESSION* TicketSlot::copy() const {
  std::lock_guard lock(mutex_);
  return session_ == nullptr ? nullptr : SSL_SESSION_dup(session_);
}

void TicketSlot::hold(SSL_SESSION* session) {
  std::lock_guard lock(mutex_);
  if (session_ != nullptr) SSL_SESSION_free(session_);
  session_ = session;
}

bool resumed(const SSL* ssl) { return SSL_session_reused(ssl) == 1; }

}  // namespace pqot::channel

// srup broker-config: the broker side of a SRUP-PQ deployment (docs/srup-tool.md, "broker-config";
// docs/srup-operations.md): mosquitto.conf and the dynamic-security plugin's starting state, with
// the C2 as the plugin's administrator. The text is pqot_mqtt's (render_broker_config,
// render_initial_dynsec: docs/mqtt.md, "The broker configuration"); this command picks the paths,
// checks the files it names, and never overwrites the registrations.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "pqot/common/files.hpp"
#include "pqot/mqtt/broker_config.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_tool {

namespace {

/// The largest dynsec.json read back to check its administrator: about 1 KiB per registered
/// identity (client, role, five ACLs), so room for tens of thousands.
constexpr std::size_t kMaxDynsecFile = 64u << 20;

struct BrokerConfigOptions {
  std::string dir;
  std::string listen = "127.0.0.1";
  unsigned port = 8883;
  std::string ca, cert, key;
  std::string admin;
  bool no_persistence = false;
  unsigned autosave_s = 60;
  std::string user;
  bool user_given = false;
  std::string dynsec_plugin = mqtt::BrokerConfig{}.dynsec_plugin;
  bool force = false;
};

// An absolute path to a readable regular file (mosquitto reads these as the `user` it drops to).
std::string readable_file(const std::string& path, const char* option) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec);
  if (ec) throw UsageError(std::string(option) + ": '" + path + "': " + ec.message());
  struct stat st {};
  if (::stat(abs.c_str(), &st) != 0) {
    throw UsageError(std::string(option) + ": '" + abs.string() + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) throw UsageError(std::string(option) + ": '" + abs.string() + "' is not a regular file");
  if (::access(abs.c_str(), R_OK) != 0) {
    throw UsageError(std::string(option) + ": '" + abs.string() + "': " + std::strerror(errno));
  }
  return abs.lexically_normal().string();
}

// The C2's broker username: c2-<16 lower-case hex digits>, the CN of its client certificate.
void check_admin(const std::string& admin) {
  const std::string prefix = "c2-";
  if (admin.rfind(prefix, 0) != 0) {
    throw UsageError("--admin: '" + admin + "' is not a C2's broker username: c2-<16 hex digits> (its certificate's CN)");
  }
  const std::uint64_t id = parse_id(admin.substr(prefix.size()), "--admin");
  if (admin != prefix + srup::id_text(id)) {
    throw UsageError("--admin: write the ID in lower case: " + prefix + srup::id_text(id));
  }
}

// An existing dynsec.json holds every registration: it is kept, but only if the C2 named by
// --admin can administer it (else the C2 could register nobody).
void check_existing_dynsec(const std::string& path, const std::string& admin) {
  std::string text;
  try {
    text = common::read_bounded_file<std::string>(path, kMaxDynsecFile);
  } catch (const std::exception& e) {
    throw UsageError(std::string("existing dynsec file: ") + e.what());
  }
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("clients") || !doc["clients"].is_array()) {
    throw UsageError("'" + path + "' exists and is not a dynamic-security file; move it away to start afresh");
  }
  for (const auto& c : doc["clients"]) {
    if (c.is_object() && c.value("username", std::string()) == admin) return;
  }
  throw UsageError("'" + path + "' exists (it holds the broker's registrations) and has no client " + admin +
                   ": that C2 could not administer the broker; name its administrator with --admin, "
                   "or move the file away to start afresh");
}

void make_private_dir(const std::filesystem::path& dir, const char* what) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return;
  if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path(), ec);
  if (ec || (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)) {
    throw UsageError(std::string(what) + ": cannot create directory '" + dir.string() + "'" +
                     (ec ? ": " + ec.message() : std::string(": ") + std::strerror(errno)));
  }
}

void run_broker_config(const BrokerConfigOptions& o) {
  check_admin(o.admin);
  if (o.autosave_s > 86400) throw UsageError("--autosave: 0 .. 86400 seconds (0: only at shutdown)");
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(o.dir, ec).lexically_normal();
  if (ec) throw UsageError("--dir: '" + o.dir + "': " + ec.message());
  const std::filesystem::path conf = dir / "mosquitto.conf";
  const std::filesystem::path dynsec = dir / "dynsec.json";
  const std::filesystem::path persist = dir / "persist";

  mqtt::BrokerConfig c;
  c.listen_host = o.listen;
  c.port = static_cast<std::uint16_t>(o.port);
  c.ca_file = readable_file(o.ca, "--ca");
  c.cert_file = readable_file(o.cert, "--cert");
  c.key_file = readable_file(o.key, "--key");
  c.dynsec_plugin = readable_file(o.dynsec_plugin, "--dynsec-plugin");
  c.persistence = !o.no_persistence;
  c.persistence_dir = persist.string();
  c.autosave_interval_s = o.autosave_s;
  c.dynsec_file = dynsec.string();
  c.log_file = (dir / "mosquitto.log").string();
  if (o.user_given) c.run_as_user = o.user;
  std::string conf_text, dynsec_text;
  try {
    conf_text = mqtt::render_broker_config(c);
    dynsec_text = mqtt::render_initial_dynsec(o.admin);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  // Every check before the first write.
  const bool dynsec_exists = std::filesystem::exists(dynsec, ec);
  if (dynsec_exists) check_existing_dynsec(dynsec.string(), o.admin);
  if (!o.force && std::filesystem::exists(conf, ec)) {
    throw UsageError("'" + conf.string() + "' exists (--force replaces it; dynsec.json is kept either way)");
  }
  make_private_dir(dir, "--dir");
  if (c.persistence) make_private_dir(persist, "persistence");
  try {
    if (!dynsec_exists) mqtt::write_config_file(dynsec.string(), dynsec_text, false);
    mqtt::write_config_file(conf.string(), conf_text, o.force);
  } catch (const std::system_error& e) {
    throw UsageError(e.what());
  }
  std::cout << "config=" << conf.string() << "\n"
            << "dynsec=" << dynsec.string() << (dynsec_exists ? " (kept: it holds the registrations)" : " (new)") << "\n"
            << "admin=" << o.admin << "\n"
            << "listener=" << o.listen << ":" << o.port << " (TLS 1.3, client certificates required)\n";
  if (c.persistence) {
    std::cout << "persistence=" << persist.string() << "/ (autosave "
              << (o.autosave_s == 0 ? std::string("at shutdown only") : "every " + std::to_string(o.autosave_s) + " s")
              << ")\n";
  } else {
    std::cout << "persistence=off\n";
  }
  std::cout << "log=" << c.log_file << "\n";
  if (!c.run_as_user.empty()) std::cout << "user=" << c.run_as_user << "\n";
  std::cout << "start=mosquitto -c " << conf.string() << "\n";
}

}  // namespace

void add_broker_config_command(CLI::App& app) {
  auto o = std::make_shared<BrokerConfigOptions>();
  CLI::App* cmd = app.add_subcommand(
      "broker-config",
      "Write a mosquitto configuration for SRUP-PQ: TLS 1.3 with client certificates, no anonymous "
      "access, registration through the dynamic-security plugin administered by the C2");
  cmd->add_option("--dir", o->dir, "Broker directory: mosquitto.conf, dynsec.json, persist/, mosquitto.log (created, mode 0700)")
      ->required();
  cmd->add_option("--listen", o->listen, "Address the TLS listener binds (default 127.0.0.1; 0.0.0.0 for every interface)");
  cmd->add_option("--port", o->port, "Listener port (default 8883)")->check(CLI::Range(1, 65535));
  cmd->add_option("--ca", o->ca, "The CA certificate clients' certificates are verified against (and which issues them)")
      ->required();
  cmd->add_option("--cert", o->cert, "The broker's server certificate")->required();
  cmd->add_option("--key", o->key, "Its private key")->required();
  cmd->add_option("--admin", o->admin, "The C2's broker username, c2-<16 hex digits>: the dynsec administrator")->required();
  cmd->add_flag("--no-persistence", o->no_persistence, "Keep no sessions or queued messages across broker restarts");
  cmd->add_option("--autosave", o->autosave_s, "Save sessions and queued messages every N seconds (default 60; 0: only at shutdown)");
  cmd->add_option("--user", o->user, "Started as root, mosquitto drops to this user (default: the user running this command if root, else none)")
      ->each([o](const std::string&) { o->user_given = true; });
  cmd->add_option("--dynsec-plugin", o->dynsec_plugin, "Path of mosquitto_dynamic_security.so");
  cmd->add_flag("--force", o->force, "Replace an existing mosquitto.conf (an existing dynsec.json is always kept)");
  cmd->callback([o] { run_broker_config(*o); });
}

}  // namespace pqot::srup_tool

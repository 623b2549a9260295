//! A real PgBouncer in front of a test cluster, started by the test that
//! needs it: its configuration and log in a temporary directory, 127.0.0.1
//! on a free port, the clients' passwords in its `auth_file` (it logs in to
//! the server with them, scram-sha-256 both ways), run as the `postgres`
//! user when the tests run as root (PgBouncer refuses root). A watchdog
//! stops it once the test process has exited, however it exited.
//!
//! The binary is `$GOALKEEPER_PGBOUNCER`, else Debian's `/usr/sbin/pgbouncer`
//! (`.ci/run` installs `pgbouncer`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::pg::{self, Database, PASSWORD, USER, wait_for};

/// How PgBouncer hands out server connections.
#[derive(Clone, Copy, Debug)]
pub enum PoolMode {
    /// A server connection per transaction: the next transaction of the
    /// same client may run on another one.
    Transaction,
    /// A server connection per client, for as long as it is connected.
    Session,
}

/// A running PgBouncer.
pub struct Bouncer {
    pub port: u16,
    dir: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
}

impl Bouncer {
    /// Starts PgBouncer in front of the server on `server_port`, with at
    /// most `pool_size` server connections per database and user.
    pub fn start(server_port: u16, mode: PoolMode, pool_size: u32) -> Bouncer {
        let bin = std::env::var_os("GOALKEEPER_PGBOUNCER")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/usr/sbin/pgbouncer"));
        assert!(
            bin.exists(),
            "PgBouncer is needed for these tests: no {}; `apt-get install pgbouncer` or set GOALKEEPER_PGBOUNCER",
            bin.display()
        );
        let dir = tempfile::Builder::new()
            .prefix("goalkeeper-pgbouncer-")
            .tempdir()
            .expect("temp dir")
            .keep();
        let as_postgres = pg::is_root();
        let mut bouncer = Bouncer {
            port: 0,
            dir,
            bin,
            as_postgres,
        };
        std::fs::write(
            bouncer.dir.join("users.txt"),
            format!("\"{USER}\" \"{PASSWORD}\"\n"),
        )
        .unwrap();
        bouncer.watchdog();
        let mode = match mode {
            PoolMode::Transaction => "transaction",
            PoolMode::Session => "session",
        };
        for _ in 0..5 {
            bouncer.port = pg::free_port();
            std::fs::write(
                bouncer.dir.join("pgbouncer.ini"),
                format!(
                    "[databases]\n\
                     * = host=127.0.0.1 port={server_port}\n\
                     [pgbouncer]\n\
                     listen_addr = 127.0.0.1\n\
                     listen_port = {port}\n\
                     unix_socket_dir =\n\
                     auth_type = scram-sha-256\n\
                     auth_file = {dir}/users.txt\n\
                     admin_users = {USER}\n\
                     pool_mode = {mode}\n\
                     default_pool_size = {pool_size}\n\
                     max_client_conn = 400\n\
                     server_login_retry = 1\n\
                     logfile = {dir}/pgbouncer.log\n\
                     pidfile = {dir}/pgbouncer.pid\n",
                    port = bouncer.port,
                    dir = bouncer.dir.display(),
                ),
            )
            .unwrap();
            if bouncer.try_start() {
                return bouncer;
            }
        }
        panic!("PgBouncer did not start:\n{}", bouncer.log());
    }

    /// goalkeeper's URL for `db`, through PgBouncer.
    pub fn url(&self, db: &Database) -> String {
        format!(
            "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{}",
            self.port, db.name
        )
    }

    /// A client of PgBouncer's admin console (simple queries only:
    /// `SHOW POOLS`, `RECONNECT`, …).
    pub fn console(&self) -> postgres::Client {
        postgres::Client::connect(
            &format!(
                "host=127.0.0.1 port={} user={USER} password={PASSWORD} dbname=pgbouncer",
                self.port
            ),
            postgres::NoTls,
        )
        .unwrap_or_else(|e| panic!("PgBouncer's console: {e}\n{}", self.log()))
    }

    /// Stops PgBouncer at once (SIGTERM: every client is disconnected).
    pub fn stop(&self) {
        if let Some(pid) = self.pid() {
            let _ = Command::new("kill").args(["-TERM", &pid]).status();
            let gone = wait_for(Duration::from_secs(10), || {
                !Command::new("kill")
                    .args(["-0", &pid])
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            });
            assert!(gone, "PgBouncer did not stop:\n{}", self.log());
            let _ = std::fs::remove_file(self.dir.join("pgbouncer.pid"));
        }
    }

    /// Starts the stopped PgBouncer again, on the same port.
    pub fn restart(&self) {
        let started = wait_for(Duration::from_secs(10), || self.try_start());
        assert!(started, "PgBouncer did not start again:\n{}", self.log());
    }

    /// PgBouncer's log, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }

    /// The directory of its configuration and log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn pid(&self) -> Option<String> {
        std::fs::read_to_string(self.dir.join("pgbouncer.pid"))
            .ok()
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
    }

    /// Starts it as a daemon and waits until it accepts connections.
    fn try_start(&self) -> bool {
        let ini = self.dir.join("pgbouncer.ini");
        let mut cmd = if self.as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&self.dir)
                .status()
                .unwrap();
            assert!(status.success(), "chown of {}", self.dir.display());
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(&self.bin);
            cmd
        } else {
            Command::new(&self.bin)
        };
        let started = cmd
            .arg("-d")
            .arg(&ini)
            .current_dir(&self.dir)
            .output()
            .is_ok_and(|o| o.status.success());
        started
            && wait_for(Duration::from_secs(5), || {
                std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            })
    }

    /// Stops PgBouncer and removes its directory once this process is
    /// gone. The watchdog outlives this process on purpose.
    #[allow(clippy::zombie_processes)]
    fn watchdog(&self) {
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 0.2; done; \
             kill -TERM $(cat {dir}/pgbouncer.pid 2>/dev/null) 2>/dev/null; sleep 0.5; rm -rf {dir}",
            pid = std::process::id(),
            dir = self.dir.display()
        );
        Command::new("sh")
            .args(["-c", &script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("PgBouncer's watchdog starts");
    }
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        self.stop();
    }
}

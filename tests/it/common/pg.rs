//! A real PostgreSQL server for the tests, started by the test run itself:
//! a cluster in a temporary directory (initdb), on a free port on
//! 127.0.0.1, password authentication (scram-sha-256), run as the
//! `postgres` user when the tests run as root (the server refuses root).
//! A small watchdog process stops it and removes its directory once the
//! test process has exited, however it exited.
//!
//! The binaries come from `$GOALKEEPER_PG_BIN`, else Debian's
//! `/usr/lib/postgresql/15/bin` (`.ci/run` installs `postgresql-15`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The password of the role the tests connect as: distinctive, so a test
/// can assert that it appears nowhere.
pub const PASSWORD: &str = "gk-Secret-Pa55word-q7";
/// The role goalkeeper connects as (owner of every test database).
pub const USER: &str = "gk_user";
const ADMIN: &str = "gk_admin";
const ADMIN_PASSWORD: &str = "gk-admin-Pa55-z3";

/// A running cluster.
pub struct Cluster {
    pub port: u16,
    dir: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
    max_connections: u32,
}

static SHARED: OnceLock<Cluster> = OnceLock::new();
static DATABASES: AtomicUsize = AtomicUsize::new(0);

/// The cluster shared by every test of this process.
pub fn shared() -> &'static Cluster {
    SHARED.get_or_init(Cluster::start)
}

/// A database of its own for one test, owned by [`USER`], on the shared
/// cluster.
pub fn database() -> Database {
    shared().database()
}

/// One test database.
pub struct Database {
    pub name: String,
    pub port: u16,
}

impl Database {
    /// The URL goalkeeper is given.
    pub fn url(&self) -> String {
        format!(
            "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{}",
            self.port, self.name
        )
    }

    /// A superuser client on this database, to look at (or tamper with)
    /// what goalkeeper wrote.
    pub fn admin(&self) -> postgres::Client {
        admin_client(self.port, &self.name)
    }
}

fn admin_client(port: u16, db: &str) -> postgres::Client {
    postgres::Client::connect(
        &format!("host=127.0.0.1 port={port} user={ADMIN} password={ADMIN_PASSWORD} dbname={db}"),
        postgres::NoTls,
    )
    .unwrap_or_else(|e| panic!("admin connection to {db}: {e}"))
}

impl Cluster {
    /// Starts a new cluster (the shared one, or a private one for a test
    /// that stops and restarts its server).
    pub fn start() -> Cluster {
        Cluster::start_inner(false, 300)
    }

    /// A private cluster that allows only `max_connections` connections
    /// at once (superusers' reserved three included).
    pub fn start_with_max_connections(max_connections: u32) -> Cluster {
        Cluster::start_inner(false, max_connections)
    }

    /// A private cluster that requires TLS of [`USER`], with a certificate
    /// for 127.0.0.1 signed by a CA of its own ([`Cluster::ca`]).
    pub fn start_tls() -> Cluster {
        Cluster::start_inner(true, 300)
    }

    /// The PEM file of the TLS cluster's CA.
    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    fn start_inner(tls: bool, max_connections: u32) -> Cluster {
        let bin = std::env::var_os("GOALKEEPER_PG_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"));
        assert!(
            bin.join("initdb").exists(),
            "PostgreSQL 15 is needed for these tests: no initdb in {}; `apt-get install postgresql-15` or set GOALKEEPER_PG_BIN",
            bin.display()
        );
        let as_postgres = is_root();
        let dir = tempfile::Builder::new()
            .prefix("goalkeeper-pg-")
            .tempdir()
            .expect("temp dir")
            .keep();
        std::fs::write(dir.join("pw"), ADMIN_PASSWORD).unwrap();
        if as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status()
                .unwrap();
            assert!(status.success(), "chown of {}", dir.display());
        }
        let mut cluster = Cluster {
            port: 0,
            dir,
            bin,
            as_postgres,
            max_connections,
        };
        let data = cluster.data();
        cluster.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                ADMIN,
                &format!("--pwfile={}", cluster.dir.join("pw").display()),
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--no-locale",
                "--no-sync",
            ],
        );
        cluster.watchdog();
        if tls {
            cluster.make_certificates();
        }
        for _ in 0..5 {
            cluster.port = free_port();
            if cluster.try_start() {
                break;
            }
        }
        assert!(
            cluster.port != 0 && cluster.is_up(),
            "the PostgreSQL server did not start:\n{}",
            cluster.log()
        );
        let mut admin = admin_client(cluster.port, "postgres");
        admin
            .batch_execute(&format!("CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'"))
            .unwrap();
        cluster
    }

    /// A CA and a server certificate for 127.0.0.1 (openssl), and
    /// `ssl = on` in the server's configuration, and TLS required of
    /// [`USER`] (the superuser still connects without, to inspect).
    fn make_certificates(&self) {
        let data = self.data();
        let script = format!(
            "set -e; cd {data}
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
              -keyout ca.key -out {dir}/ca.pem -days 2 -subj '/CN=goalkeeper test CA' \
              -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
              -keyout server.key -out server.csr -subj /CN=127.0.0.1
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > ext
            openssl x509 -req -in server.csr -CA {dir}/ca.pem -CAkey ca.key -CAcreateserial \
              -out server.crt -days 2 -extfile ext
            chmod 600 server.key
            echo 'ssl = on' >> postgresql.conf
            {{ printf 'hostnossl all {USER} 127.0.0.1/32 reject\\n'; cat pg_hba.conf; }} > hba && mv hba pg_hba.conf",
            dir = self.dir.display()
        );
        let output = Command::new("sh").args(["-c", &script]).output().unwrap();
        assert!(
            output.status.success(),
            "making the test certificates failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        if self.as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&self.dir)
                .status()
                .unwrap();
            assert!(status.success());
        }
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    /// Runs a PostgreSQL binary (as `postgres` when we are root).
    fn run(&self, name: &str, args: &[&str]) -> std::process::Output {
        let output = self.command(name, args).output().unwrap();
        assert!(
            output.status.success(),
            "{name} {args:?} failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    fn command(&self, name: &str, args: &[&str]) -> Command {
        let program = self.bin.join(name);
        let mut cmd = if self.as_postgres {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(program);
            cmd
        } else {
            Command::new(program)
        };
        cmd.args(args).current_dir(&self.dir);
        cmd
    }

    fn try_start(&self) -> bool {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c full_page_writes=off -c max_connections={}",
            self.port,
            self.dir.display(),
            self.max_connections
        );
        let log = self.dir.join("log").display().to_string();
        self.command(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-w",
                "-t",
                "60",
                "-o",
                &options,
                "start",
            ],
        )
        .output()
        .is_ok_and(|o| o.status.success())
    }

    /// Stops the server (fast shutdown: sessions are ended, nothing
    /// committed is lost).
    pub fn stop(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
    }

    /// Starts the stopped server again, on the same port.
    pub fn restart(&self) {
        assert!(self.try_start(), "restart failed:\n{}", self.log());
    }

    /// True when the server answers.
    pub fn is_up(&self) -> bool {
        self.command(
            "pg_isready",
            &["-h", "127.0.0.1", "-p", &self.port.to_string()],
        )
        .output()
        .is_ok_and(|o| o.status.success())
    }

    /// The server's log, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }

    /// A new database owned by [`USER`].
    pub fn database(&self) -> Database {
        let name = format!(
            "t{}_{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::Relaxed)
        );
        let mut admin = admin_client(self.port, "postgres");
        admin
            .batch_execute(&format!("CREATE DATABASE {name} OWNER {USER}"))
            .unwrap();
        Database {
            name,
            port: self.port,
        }
    }

    /// Stops the server and removes its directory once this process is
    /// gone (a test binary has no hook that runs at its end). The watchdog
    /// outlives this process on purpose, so it is never waited for.
    #[allow(clippy::zombie_processes)]
    fn watchdog(&self) {
        let pg_ctl = self.bin.join("pg_ctl");
        let stop = if self.as_postgres {
            format!(
                "runuser -u postgres -- {} -D {} -m immediate stop",
                pg_ctl.display(),
                self.data()
            )
        } else {
            format!("{} -D {} -m immediate stop", pg_ctl.display(), self.data())
        };
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 0.2; done; {stop} >/dev/null 2>&1; rm -rf {dir}",
            pid = std::process::id(),
            dir = self.dir.display()
        );
        Command::new("sh")
            .args(["-c", &script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the cluster's watchdog starts");
    }

    /// The directory of the cluster.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

pub(crate) fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Waits until `f` holds, up to `limit`.
pub fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

/// The database that holds the store acceptance tests' schemas, and a
/// superuser client on it (kept open: one schema per test is cheap, one
/// database or one login per test is not).
fn store_tests() -> &'static (Database, std::sync::Mutex<postgres::Client>) {
    static STORE_TESTS: OnceLock<(Database, std::sync::Mutex<postgres::Client>)> = OnceLock::new();
    STORE_TESTS.get_or_init(|| {
        let db = database();
        let admin = db.admin();
        (db, std::sync::Mutex::new(admin))
    })
}

/// The URL of a new, empty schema of its own (owned by [`USER`]) on the
/// shared cluster: what one store acceptance test runs against.
pub fn fresh_schema_url() -> String {
    static SCHEMAS: AtomicUsize = AtomicUsize::new(0);
    let (db, admin) = store_tests();
    let schema = format!("s{}", SCHEMAS.fetch_add(1, Ordering::Relaxed));
    admin
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .batch_execute(&format!("CREATE SCHEMA {schema} AUTHORIZATION {USER}"))
        .unwrap();
    format!("{}?options=-csearch_path%3D{schema}", db.url())
}

/// A store on a new, empty schema of its own (see [`fresh_schema_url`]).
pub fn store() -> goalkeeper::Store {
    let url = fresh_schema_url();
    let location = goalkeeper::store::Location::parse(&url).unwrap();
    goalkeeper::Store::open(&location).expect("a PostgreSQL store opens")
}

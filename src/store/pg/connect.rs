//! Connecting: TLS through rustls, a bound on each attempt, and attempts
//! again while the server turns connections away for now.
//!
//! **Try again.** A burst of agents can open more connections at once than
//! the server allows (`max_connections`), and a restarting server refuses
//! them while it starts. Such a refusal (SQLSTATE 53300
//! too_many_connections, 57P03 cannot_connect_now, PgBouncer's
//! `no more connections allowed`, a connection reset or closed while it
//! starts up) is tried again after a pause that doubles from 20 ms up to
//! 1 s, each drawn at random from its upper half so that a burst spreads
//! out, until the URL's retry time ([`PgUrl::retrying_for`]) is spent; the
//! error then says what to change. A connection refused outright (nothing
//! listens on the port) fails at once, unless a long-lived process is
//! reconnecting after losing its connection: then the server or the pooler
//! is most likely restarting. Nothing runs before a connection is made, so
//! a refused command never half-ran.

use std::error::Error as StdError;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use postgres::Client;
use postgres::config::SslMode;
use postgres::error::SqlState;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::PgUrl;
use super::describe;
use crate::error::{Error, Result};

/// Why a connection attempt may be tried again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TryAgain {
    /// The server (or the pooler) has no connection slot left.
    TooMany,
    /// The server is starting up or shutting down.
    NotNow,
    /// The connection was reset or closed before it was set up.
    Reset,
    /// Nothing accepted the connection (retried only when reconnecting).
    Refused,
}

/// The pauses between attempts: doubling from [`Backoff::FIRST`] up to
/// [`Backoff::MOST`], each drawn from the upper half of its step.
pub(crate) struct Backoff {
    step: Duration,
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(20);
    const MOST: Duration = Duration::from_secs(1);

    pub(crate) fn new() -> Backoff {
        Backoff {
            step: Backoff::FIRST,
        }
    }

    /// The next pause.
    pub(crate) fn next_pause(&mut self) -> Duration {
        let step = self.step;
        self.step = (step * 2).min(Backoff::MOST);
        let half = step / 2;
        half + half.mul_f64(unit_random())
    }
}

/// A number in [0, 1), different in every call and every process: the
/// standard library's hash keys, which it draws from the operating
/// system's random source, are all the randomness a pause needs.
fn unit_random() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::hash::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// Connects to `url`, each attempt bounded by its connect timeout, trying
/// again while the server turns the connection away for now (see the
/// module doc) until `until`. `reconnecting`: a long-lived process lost
/// its connection, and a refused one is tried again too.
pub(crate) fn connect(url: &PgUrl, until: Instant, reconnecting: bool) -> Result<Client> {
    let mut backoff = Backoff::new();
    loop {
        let failed = match attempt(url)? {
            Ok(client) => return Ok(client),
            Err(failed) => failed,
        };
        let Some(why) = try_again(&failed, reconnecting) else {
            return Err(connect_error(url, &failed));
        };
        let pause = backoff.next_pause();
        if Instant::now() + pause > until {
            return Err(gave_up(url, &failed, why));
        }
        std::thread::sleep(pause);
    }
}

/// One attempt, giving up after the URL's connect timeout. The client's own
/// `connect_timeout` covers only the TCP connect; a server that accepts and
/// then never answers (a stopped process whose port is still held, a
/// firewall that swallows packets) would hang the TLS and authentication
/// steps, so the whole attempt runs on a thread that is abandoned when the
/// time is up. `Ok(Err(_))`: the server or the network said no.
fn attempt(url: &PgUrl) -> Result<std::result::Result<Client, postgres::Error>> {
    let config = url.config.clone();
    let (send, receive) = mpsc::channel();
    match url.tls {
        SslMode::Disable => {
            std::thread::spawn(move || {
                let _ = send.send(config.connect(postgres::NoTls));
            });
        }
        _ => {
            let tls = tokio_postgres_rustls::MakeRustlsConnect::new(tls_config(url)?);
            std::thread::spawn(move || {
                let _ = send.send(config.connect(tls));
            });
        }
    }
    let seconds = url.connect_timeout.as_secs();
    receive.recv_timeout(url.connect_timeout).map_err(|_| {
        Error::Postgres(format!(
            "cannot connect to PostgreSQL at {url}: no answer within {seconds} s; check the host, the port and the network, or raise connect_timeout=SECONDS in the URL"
        ))
    })
}

/// Whether `e`, the failure of a connection attempt or of the first
/// statement on a new connection, means "try again later".
pub(crate) fn try_again(e: &postgres::Error, reconnecting: bool) -> Option<TryAgain> {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        if code == &SqlState::TOO_MANY_CONNECTIONS {
            return Some(TryAgain::TooMany);
        }
        if code == &SqlState::CANNOT_CONNECT_NOW {
            return Some(TryAgain::NotNow);
        }
        // PgBouncer says everything with 08P01; these two mean later.
        let message = db.message();
        if message.starts_with("no more connections allowed") {
            return Some(TryAgain::TooMany);
        }
        if message.starts_with("server login has been failing")
            || message.starts_with("pgbouncer cannot connect to server")
        {
            return Some(TryAgain::NotNow);
        }
        return None;
    }
    if e.is_closed() {
        return Some(TryAgain::Reset);
    }
    let mut source = e.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            return match io.kind() {
                K::ConnectionReset | K::ConnectionAborted | K::UnexpectedEof | K::BrokenPipe => {
                    Some(TryAgain::Reset)
                }
                K::ConnectionRefused if reconnecting => Some(TryAgain::Refused),
                _ => None,
            };
        }
        source = cause.source();
    }
    None
}

/// The error after the last attempt: what the server said, how long it
/// was tried, and what to change.
fn gave_up(url: &PgUrl, e: &postgres::Error, why: TryAgain) -> Error {
    let text = url.scrub(&describe(e));
    let tried = if url.retry.is_zero() {
        format!("not tried again ({})", url.retry_set_by)
    } else {
        format!(
            "still so after trying again for {:.0} s ({})",
            url.retry.as_secs_f64(),
            url.retry_set_by
        )
    };
    let fix = match why {
        TryAgain::TooMany => {
            "the server has fewer connection slots than goalkeeper's processes need at once: raise its max_connections, or put PgBouncer in front of it (pool_mode = transaction in pgbouncer.ini) and point the URL at PgBouncer"
        }
        TryAgain::NotNow => "the server is starting up or shutting down; retry once it is up",
        TryAgain::Reset | TryAgain::Refused => {
            "is the server (or the pooler in front of it) running, and listening on that host and port?"
        }
    };
    Error::Postgres(format!(
        "cannot connect to PostgreSQL at {url}: {text}; {tried}; {fix}"
    ))
}

/// The TLS configuration: Mozilla's roots plus the URL's `sslrootcert`.
fn tls_config(url: &PgUrl) -> Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = &url.root_cert {
        let unusable = |why: String| {
            Error::Usage(format!(
                "sslrootcert={} in the PostgreSQL URL {url} is not usable: {why}; give a PEM file of the server's certificate authority",
                path.display()
            ))
        };
        let pem = std::fs::read(path).map_err(|e| unusable(e.to_string()))?;
        let mut found = 0;
        for cert in CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|e| unusable(e.to_string()))?;
            roots.add(cert).map_err(|e| unusable(e.to_string()))?;
            found += 1;
        }
        if found == 0 {
            return Err(unusable("it holds no PEM certificate".into()));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Postgres(format!("cannot set up TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// A failed connection attempt, said so that the user knows what to fix.
fn connect_error(url: &PgUrl, e: &postgres::Error) -> Error {
    let text = url.scrub(&describe(e));
    let fix = match e.as_db_error().map(|db| db.code()) {
        Some(code)
            if code == &SqlState::INVALID_PASSWORD
                || code == &SqlState::INVALID_AUTHORIZATION_SPECIFICATION =>
        {
            "check the user name and the password in the URL (or $PGPASSWORD)"
        }
        Some(code) if code == &SqlState::INVALID_CATALOG_NAME => {
            "create the database first (CREATE DATABASE … OWNER …); goalkeeper creates its tables in it, not the database"
        }
        Some(code)
            if code == &SqlState::CANNOT_CONNECT_NOW || code == &SqlState::ADMIN_SHUTDOWN =>
        {
            "the server is starting up or shutting down; retry in a moment"
        }
        Some(_) => "see the server's message",
        None if text.contains("refused") => {
            "is the server running, and listening on that host and port?"
        }
        None if text.to_ascii_lowercase().contains("certificate")
            || text.contains("tls")
            || text.contains("TLS") =>
        {
            "give the server's CA with sslrootcert=PATH, or sslmode=disable on a trusted network"
        }
        None if text.contains("server does not support TLS") => {
            "use sslmode=prefer or disable, or enable TLS on the server"
        }
        None => "check the URL and that the server is reachable",
    };
    Error::Postgres(format!(
        "cannot connect to PostgreSQL at {url}: {text}; {fix}"
    ))
}

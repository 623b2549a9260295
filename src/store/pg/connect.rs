//! Connecting: TLS through rustls, and a bound on the whole wait.

use std::sync::Arc;
use std::sync::mpsc;

use postgres::Client;
use postgres::config::SslMode;
use postgres::error::SqlState;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::PgUrl;
use super::describe;
use crate::error::{Error, Result};

/// Connects to `url`, giving up after its connect timeout. The client's own
/// `connect_timeout` covers only the TCP connect; a server that accepts and
/// then never answers (a stopped process whose port is still held, a
/// firewall that swallows packets) would hang the TLS and authentication
/// steps, so the whole attempt runs on a thread that is abandoned when the
/// time is up.
pub(crate) fn connect(url: &PgUrl) -> Result<Client> {
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
    match receive.recv_timeout(url.connect_timeout) {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(connect_error(url, &e)),
        Err(_) => Err(Error::Postgres(format!(
            "cannot connect to PostgreSQL at {url}: no answer within {seconds} s; check the host, the port and the network, or raise connect_timeout=SECONDS in the URL"
        ))),
    }
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

//! A PostgreSQL URL: parsed into the client's configuration, with the
//! password kept out of everything that is shown.
//!
//! Accepted: `postgres://[user[:password]@]host[:port]/dbname[?key=value&…]`
//! with the client's keys (`connect_timeout`, `options`,
//! `application_name`, …) and libpq's TLS keys: `sslmode` = `disable`,
//! `prefer` (the default: TLS when the server offers it), `require`,
//! `verify-ca` or `verify-full`, and `sslrootcert` = a PEM file of the CA to
//! trust besides the bundled Mozilla roots (a managed server's own CA).
//! Whenever TLS is used the server's certificate is verified, for every
//! mode: a rustls client does not connect blind, so `require` here is
//! libpq's `verify-full`.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use postgres::config::SslMode;

use crate::error::{Error, Result};

/// How long connecting may take, in all (TCP, TLS, authentication), unless
/// the URL says otherwise with `connect_timeout` (seconds).
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A parsed PostgreSQL URL. `Display` and `Debug` show it with the password
/// replaced by `***`.
#[derive(Clone)]
pub struct PgUrl {
    pub(crate) config: postgres::Config,
    pub(crate) tls: SslMode,
    pub(crate) root_cert: Option<PathBuf>,
    pub(crate) connect_timeout: Duration,
    shown: String,
}

impl PgUrl {
    /// Parses `text`, refusing with a clear message (that never repeats the
    /// password) a URL the client cannot use.
    pub fn parse(text: &str) -> Result<PgUrl> {
        let shown = redact(text);
        let bad = |why: String| {
            Error::Usage(format!(
                "the PostgreSQL URL {shown} is not usable: {why}; write it as postgres://user:password@host:port/dbname?sslmode=require"
            ))
        };
        let (base, query) = match text.split_once('?') {
            Some((base, query)) => (base, Some(query)),
            None => (text, None),
        };
        let mut kept = Vec::new();
        let mut tls = SslMode::Prefer;
        let mut root_cert = None;
        let mut connect_timeout = DEFAULT_CONNECT_TIMEOUT;
        for pair in query.into_iter().flat_map(|q| q.split('&')) {
            if pair.is_empty() {
                continue;
            }
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_decode(value).ok_or_else(|| {
                bad(format!(
                    "the value of {key} is not valid percent-encoded UTF-8"
                ))
            })?;
            match key {
                "sslmode" => {
                    tls = match value.as_str() {
                        "disable" => SslMode::Disable,
                        "allow" | "prefer" => SslMode::Prefer,
                        "require" | "verify-ca" | "verify-full" => SslMode::Require,
                        other => {
                            return Err(bad(format!(
                                "sslmode={other} is not one of disable, prefer, require, verify-ca, verify-full"
                            )));
                        }
                    }
                }
                "sslrootcert" => root_cert = Some(PathBuf::from(value)),
                "connect_timeout" => {
                    let seconds: u64 = value.parse().ok().filter(|s| *s > 0).ok_or_else(|| {
                        bad(format!(
                            "connect_timeout={value} is not a positive number of seconds"
                        ))
                    })?;
                    connect_timeout = Duration::from_secs(seconds);
                }
                _ => kept.push(pair),
            }
        }
        let rebuilt = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        let mut config =
            postgres::Config::from_str(&rebuilt).map_err(|e| bad(scrub(&e.to_string(), text)))?;
        if config.get_hosts().is_empty() {
            return Err(bad("it names no host".into()));
        }
        if config.get_dbname().is_none() {
            return Err(bad("it names no database (the path after the host)".into()));
        }
        if config.get_user().is_none() {
            return Err(bad("it names no user (user@ before the host)".into()));
        }
        // A writer waits for a session's lock at most as long as SQLite's
        // busy timeout; a transaction left open by a client that vanished
        // (a machine cut off, not a killed process, whose socket closes at
        // once) gives its locks back after a minute.
        let mut options = config.get_options().unwrap_or_default().to_owned();
        for (name, setting) in [
            ("lock_timeout", "-c lock_timeout=30s"),
            (
                "idle_in_transaction_session_timeout",
                "-c idle_in_transaction_session_timeout=60s",
            ),
        ] {
            if !options.contains(name) {
                if !options.is_empty() {
                    options.push(' ');
                }
                options.push_str(setting);
            }
        }
        config.options(&options);
        if config.get_application_name().is_none() {
            config.application_name("goalkeeper");
        }
        config.connect_timeout(connect_timeout);
        config.ssl_mode(tls);
        Ok(PgUrl {
            config,
            tls,
            root_cert,
            connect_timeout,
            shown,
        })
    }

    /// Uses `password` when the URL carries none (`$PGPASSWORD`, say).
    pub(crate) fn with_password_fallback(mut self, password: Option<&str>) -> PgUrl {
        if let (None, Some(password)) = (
            self.config.get_password(),
            password.filter(|p| !p.is_empty()),
        ) {
            self.config.password(password);
        }
        self
    }

    /// The database name.
    #[cfg(test)]
    pub(crate) fn dbname(&self) -> &str {
        self.config.get_dbname().unwrap_or_default()
    }

    /// Removes the password from a message that might quote it (an error
    /// relayed from the server or the client library).
    pub(crate) fn scrub(&self, message: &str) -> String {
        match self
            .config
            .get_password()
            .and_then(|p| std::str::from_utf8(p).ok())
        {
            Some(password) => scrub_password(message, password),
            None => message.to_owned(),
        }
    }
}

impl fmt::Display for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PgUrl({})", self.shown)
    }
}

/// The URL with the password of its user part and any `password=` query
/// value replaced by `***`.
pub(crate) fn redact(text: &str) -> String {
    let Some(scheme_end) = text.find("://").map(|i| i + 3) else {
        return text.to_owned();
    };
    let rest = &text[scheme_end..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let mut out = text[..scheme_end].to_owned();
    match authority.rfind('@') {
        Some(at) => {
            let user_info = &authority[..at];
            match user_info.split_once(':') {
                Some((user, _)) => out.push_str(&format!("{user}:***")),
                None => out.push_str(user_info),
            }
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    let tail = &rest[authority_end..];
    match tail.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some(("password", _)) => "password=***".to_owned(),
                    _ => pair.to_owned(),
                })
                .collect();
            out.push_str(&pairs.join("&"));
        }
        None => out.push_str(tail),
    }
    out
}

/// `message` with every occurrence of the URL's password (raw or
/// percent-decoded) replaced by `***`.
fn scrub(message: &str, url: &str) -> String {
    let mut message = message.to_owned();
    for password in url_passwords(url) {
        message = scrub_password(&message, &password);
    }
    message
}

fn scrub_password(message: &str, password: &str) -> String {
    // A one- or two-character password would blank out ordinary words; such
    // a password is not a secret worth that.
    if password.chars().count() < 3 {
        return message.to_owned();
    }
    message.replace(password, "***")
}

/// The password of a URL as written and as decoded, from the user part and
/// from a `password=` key.
fn url_passwords(url: &str) -> Vec<String> {
    let mut found = Vec::new();
    if let Some(rest) = url.split_once("://").map(|(_, r)| r) {
        let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
        if let Some((_, password)) = authority
            .rsplit_once('@')
            .and_then(|(user_info, _)| user_info.split_once(':'))
        {
            found.push(password.to_owned());
        }
    }
    if let Some((_, query)) = url.split_once('?') {
        for pair in query.split('&') {
            if let Some(("password", value)) = pair.split_once('=') {
                found.push(value.to_owned());
            }
        }
    }
    let decoded: Vec<String> = found.iter().filter_map(|p| percent_decode(p)).collect();
    found.extend(decoded);
    found
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_never_shown() {
        for url in [
            "postgres://gk:hunter2x@db.example.com:5432/goals",
            "postgres://gk:hunter2x@db.example.com/goals?sslmode=require",
            "postgresql://gk@db.example.com/goals?password=hunter2x",
        ] {
            let parsed = PgUrl::parse(url).unwrap();
            assert!(!parsed.to_string().contains("hunter2x"), "{parsed}");
            assert!(!format!("{parsed:?}").contains("hunter2x"));
        }
        assert_eq!(
            redact("postgres://gk:hunter2x@db:5432/goals?sslmode=require&password=x"),
            "postgres://gk:***@db:5432/goals?sslmode=require&password=***"
        );
        assert_eq!(redact("postgres://gk@db/goals"), "postgres://gk@db/goals");
    }

    #[test]
    fn tls_modes_and_the_timeout_come_from_the_url() {
        let url = PgUrl::parse("postgres://gk@db/goals").unwrap();
        assert_eq!(
            (url.tls, url.connect_timeout),
            (SslMode::Prefer, DEFAULT_CONNECT_TIMEOUT)
        );
        let url = PgUrl::parse(
            "postgres://gk@db/goals?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&connect_timeout=3",
        )
        .unwrap();
        assert_eq!(url.tls, SslMode::Require);
        assert_eq!(url.root_cert, Some(PathBuf::from("/etc/ca.pem")));
        assert_eq!(url.connect_timeout, Duration::from_secs(3));
        assert_eq!(url.dbname(), "goals");
    }

    #[test]
    fn unusable_urls_are_refused_without_the_password() {
        for (url, why) in [
            (
                "postgres://gk:hunter2x@db/goals?sslmode=maybe",
                "sslmode=maybe is not one of",
            ),
            (
                "postgres://gk:hunter2x@db/goals?connect_timeout=0",
                "connect_timeout=0 is not a positive",
            ),
            ("postgres://gk:hunter2x@db", "names no database"),
            ("postgres://db/goals", "names no user"),
            ("postgres://gk:hunter2x@db:notaport/goals", "invalid"),
        ] {
            let message = PgUrl::parse(url).unwrap_err().to_string();
            assert!(message.contains(why), "{url}: {message}");
            assert!(!message.contains("hunter2x"), "{message}");
            assert!(
                message.contains("postgres://user:password@host:port/dbname"),
                "{message}"
            );
        }
    }
}

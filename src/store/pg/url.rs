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
//!
//! **No session state.** The URL's `options` (`-c name=value` settings)
//! are not sent when connecting, where PgBouncer refuses them: each
//! transaction sets them itself, with `set_config(…, true)` (what `SET
//! LOCAL` does) right after its `BEGIN`, in the same round trip. So a
//! transaction needs nothing its connection was given earlier, and runs the
//! same on whatever server connection a pooler hands it.

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
    /// How long a connection the server turns away for now (too many
    /// clients, starting up) is tried again ([`PgUrl::retrying_for`]).
    pub(crate) retry: Duration,
    /// What chose [`PgUrl::retry`], for the message that says how long it
    /// was.
    pub(crate) retry_set_by: &'static str,
    /// The statement that applies the settings every transaction runs
    /// with, sent with its `BEGIN` (see the module doc).
    pub(crate) settings_sql: String,
    shown: String,
}

/// What a transaction waits for a session's lock at most, as SQLite's busy
/// timeout; and how long a transaction left open by a client that vanished
/// (a machine cut off, not a killed process, whose socket closes at once)
/// keeps its locks. The URL's own `options` for either win.
const DEFAULT_SETTINGS: [(&str, &str); 2] = [
    ("lock_timeout", "30s"),
    ("idle_in_transaction_session_timeout", "60s"),
];

/// How long a connection refused for now is tried again, unless the
/// caller says otherwise.
pub(crate) const DEFAULT_RETRY: Duration = Duration::from_secs(30);

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
        let mut settings = Vec::new();
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
                "options" => settings = parse_options(&value).map_err(bad)?,
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
        for (name, value) in DEFAULT_SETTINGS {
            if !settings.iter().any(|(given, _)| given == name) {
                settings.push((name.to_owned(), value.to_owned()));
            }
        }
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
            retry: DEFAULT_RETRY,
            retry_set_by: "the default",
            settings_sql: settings_sql(&settings),
            shown,
        })
    }

    /// The same URL, with connections the server turns away for now (too
    /// many clients already, starting up or shutting down, a connection
    /// reset while it starts) tried again, with growing pauses, for up to
    /// `retry` before the error (30 s unless set; zero: never).
    pub fn retrying_for(self, retry: Duration) -> PgUrl {
        self.retrying_for_as(retry, "as the caller chose")
    }

    /// [`PgUrl::retrying_for`], saying in the error what chose the time
    /// (a setting's name).
    pub(crate) fn retrying_for_as(mut self, retry: Duration, set_by: &'static str) -> PgUrl {
        self.retry = retry;
        self.retry_set_by = set_by;
        self
    }

    /// Uses `password` when the URL carries none (`$PGPASSWORD`, say).
    #[cfg_attr(not(feature = "cli"), expect(dead_code))]
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

/// The settings of a URL's `options`: libpq's command-line switches for
/// the server, of which only settings make sense for goalkeeper
/// (`-c name=value`, `-cname=value`, `--name=value`), split at unescaped
/// whitespace, a backslash escaping the next character. Anything else is
/// refused with the reason.
fn parse_options(options: &str) -> std::result::Result<Vec<(String, String)>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut settings = Vec::new();
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        let setting = if word == "-c" {
            words.next().unwrap_or_default()
        } else if let Some(rest) = word.strip_prefix("-c") {
            rest.to_owned()
        } else if let Some(rest) = word.strip_prefix("--") {
            rest.to_owned()
        } else {
            return Err(format!(
                "options holds {word:?}, which is not a setting; give settings as -c name=value"
            ));
        };
        let Some((name, value)) = setting.split_once('=') else {
            return Err(format!(
                "options holds {setting:?}, which is not name=value; give settings as -c name=value"
            ));
        };
        // `--name=value` may spell the name's underscores as dashes.
        let name = name.replace('-', "_");
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(format!(
                "options names the setting {name:?}, which is no setting name"
            ));
        }
        if value.contains('\0') {
            return Err(format!(
                "the value of the setting {name} holds a NUL character"
            ));
        }
        settings.retain(|(given, _): &(String, String)| *given != name);
        settings.push((name, value.to_owned()));
    }
    Ok(settings)
}

/// One statement that gives the transaction it runs in each setting
/// (`set_config` with `is_local`: until the transaction ends).
fn settings_sql(settings: &[(String, String)]) -> String {
    let calls: Vec<String> = settings
        .iter()
        .map(|(name, value)| format!("set_config({}, {}, true)", literal(name), literal(value)))
        .collect();
    format!("SELECT {}", calls.join(", "))
}

/// `text` as a SQL string literal that means the same whatever
/// `standard_conforming_strings` says (an escape string, `E'…'`).
fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 3);
    out.push_str("E'");
    for c in text.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
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
    fn options_become_settings_of_each_transaction_and_nothing_is_sent_at_connect() {
        let url = PgUrl::parse("postgres://gk@db/goals").unwrap();
        assert_eq!(url.config.get_options(), None);
        assert_eq!(
            url.settings_sql,
            "SELECT set_config(E'lock_timeout', E'30s', true), \
             set_config(E'idle_in_transaction_session_timeout', E'60s', true)"
        );
        // The URL's own win; every spelling libpq's options allow.
        let url = PgUrl::parse(
            "postgres://gk@db/goals?options=-csearch_path%3Dteam_a%20-c%20lock_timeout%3D5s%20--statement-timeout%3D1min%20-c%20application_name%3Dit%5C%20s%27",
        )
        .unwrap();
        assert_eq!(url.config.get_options(), None);
        assert_eq!(
            url.settings_sql,
            "SELECT set_config(E'search_path', E'team_a', true), \
             set_config(E'lock_timeout', E'5s', true), \
             set_config(E'statement_timeout', E'1min', true), \
             set_config(E'application_name', E'it s''', true), \
             set_config(E'idle_in_transaction_session_timeout', E'60s', true)"
        );
        assert_eq!(literal(r"a\b'c"), r"E'a\\b''c'");
    }

    #[test]
    fn options_that_are_not_settings_are_refused() {
        for (options, why) in [
            ("-d%205", "options holds \"-d\", which is not a setting"),
            (
                "-c%20lock_timeout",
                "options holds \"lock_timeout\", which is not name=value",
            ),
            (
                "-cx%3By%3D1",
                "options names the setting \"x;y\", which is no setting name",
            ),
            (
                "-cx%3Da%00b",
                "the value of the setting x holds a NUL character",
            ),
        ] {
            let message = PgUrl::parse(&format!(
                "postgres://gk:hunter2x@db/goals?options={options}"
            ))
            .unwrap_err()
            .to_string();
            assert!(message.contains(why), "{options}: {message}");
            assert!(!message.contains("hunter2x"), "{message}");
        }
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

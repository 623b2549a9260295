//! Where the store lives: a SQLite file (a path, the embedded default) or a
//! PostgreSQL database (a `postgres://` URL, fleet mode, DESIGN.md §11).

use std::path::PathBuf;

#[cfg(not(feature = "postgres"))]
use crate::error::Error;
use crate::error::Result;

#[cfg(feature = "postgres")]
pub use super::pg::PgUrl;

/// What `--db` / `$GOALKEEPER_DB` names.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Location {
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL database.
    #[cfg(feature = "postgres")]
    Postgres(Box<PgUrl>),
}

impl Location {
    /// Reads a `--db` value: `postgres://…` or `postgresql://…` is a
    /// PostgreSQL URL, anything else the path of a SQLite file. A path that
    /// merely looks like a URL of another scheme stays a path (a file named
    /// `mysql:` is unusual but legal). Refused: a PostgreSQL URL that does not
    /// parse, or one given to a build without the `postgres` feature.
    pub fn parse(text: &str) -> Result<Location> {
        if !is_postgres_url(text) {
            return Ok(Location::Sqlite(PathBuf::from(text)));
        }
        #[cfg(feature = "postgres")]
        {
            PgUrl::parse(text).map(|url| Location::Postgres(Box::new(url)))
        }
        #[cfg(not(feature = "postgres"))]
        {
            Err(Error::Usage(
                "this goalkeeper was built without PostgreSQL support (the `postgres` cargo feature); give the path of a SQLite file".into(),
            ))
        }
    }

    /// How the location is shown to a person: the path, or the URL with
    /// its password replaced by `***`.
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(path) => path.display().to_string(),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => url.to_string(),
        }
    }
}

/// True for the two URL schemes libpq accepts for PostgreSQL.
pub(crate) fn is_postgres_url(text: &str) -> bool {
    let lower = text.get(..13).unwrap_or(text).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// A SQLite file's path.
impl From<&std::path::Path> for Location {
    fn from(path: &std::path::Path) -> Location {
        Location::Sqlite(path.to_owned())
    }
}

/// A SQLite file's path.
impl From<&PathBuf> for Location {
    fn from(path: &PathBuf) -> Location {
        Location::Sqlite(path.clone())
    }
}

/// A SQLite file's path.
impl From<PathBuf> for Location {
    fn from(path: PathBuf) -> Location {
        Location::Sqlite(path)
    }
}

impl From<&Location> for Location {
    fn from(location: &Location) -> Location {
        location.clone()
    }
}

/// A PostgreSQL database.
#[cfg(feature = "postgres")]
impl From<PgUrl> for Location {
    fn from(url: PgUrl) -> Location {
        Location::Postgres(Box::new(url))
    }
}

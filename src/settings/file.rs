//! Finding and reading the settings file, and resolving the paths it
//! holds.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};

use super::keys::Key;

/// The environment variable naming the settings file when `--config` is
/// not given.
pub(crate) const CONFIG_ENV: &str = "GOALKEEPER_CONFIG";

/// Where the settings file was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum ConfigSource {
    /// Named by `--config`; it must exist.
    Flag,
    /// Named by `$GOALKEEPER_CONFIG`; it must exist.
    Env,
    /// The platform default; a missing file means defaults.
    Platform,
}

/// The settings file to read, and who chose it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ConfigFile {
    /// The file.
    pub path: PathBuf,
    /// Who named it.
    pub source: ConfigSource,
}

impl ConfigFile {
    /// The file `--config` (`config`) names, else `$GOALKEEPER_CONFIG` if
    /// set and non-empty, else `config.toml` in the platform config
    /// directory. `None` when no home directory is known and nothing was
    /// named.
    pub(crate) fn locate(config: Option<&Path>) -> Option<ConfigFile> {
        ConfigFile::locate_with(config, config_env(), platform_config_file())
    }

    /// [`ConfigFile::locate`] with the environment value and the platform
    /// default passed in, so tests need not touch the process environment.
    pub(super) fn locate_with(
        config: Option<&Path>,
        env: Option<OsString>,
        platform: Option<PathBuf>,
    ) -> Option<ConfigFile> {
        if let Some(path) = config {
            return Some(ConfigFile {
                path: path.to_owned(),
                source: ConfigSource::Flag,
            });
        }
        if let Some(path) = env.filter(|value| !value.is_empty()) {
            return Some(ConfigFile {
                path: PathBuf::from(path),
                source: ConfigSource::Env,
            });
        }
        platform.map(|path| ConfigFile {
            path,
            source: ConfigSource::Platform,
        })
    }

    /// How the file was named, for messages: `--config`, `$GOALKEEPER_CONFIG`
    /// or `the platform default`.
    pub(crate) fn named_by(&self) -> &'static str {
        match self.source {
            ConfigSource::Flag => "--config",
            ConfigSource::Env => "$GOALKEEPER_CONFIG",
            ConfigSource::Platform => "the platform default",
        }
    }
}

/// The one place the process environment is read for the settings file.
fn config_env() -> Option<OsString> {
    std::env::var_os(CONFIG_ENV)
}

pub(super) fn platform_config_file() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "goalkeeper")
        .map(|dirs| dirs.config_dir().join("config.toml"))
}

/// The file's text; `None` for a missing platform default.
pub(super) fn read(file: &ConfigFile) -> Result<Option<String>> {
    let path = &file.path;
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(_) if path.is_dir() => Err(Error::Usage(format!(
            "settings file {} (named by {}) is a directory; give the path of a TOML file, e.g. {}",
            path.display(),
            file.named_by(),
            path.join("config.toml").display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match file.source {
            ConfigSource::Platform => Ok(None),
            ConfigSource::Flag | ConfigSource::Env => Err(Error::Usage(format!(
                "settings file {} (named by {}) does not exist; create it or name another file",
                path.display(),
                file.named_by()
            ))),
        },
        Err(source) => Err(Error::Io {
            what: format!("cannot read settings file {}", path.display()),
            source,
        }),
    }
}

/// Makes `path` absolute: `~` and `~/...` are the home directory, anything
/// else relative is joined to `base` and then to the current directory.
/// Nothing is checked on disk: the file may be created later.
pub(super) fn resolve(key: Key, path: &Path, base: &Path) -> Result<PathBuf> {
    let home = || directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_owned());
    let path = expand_home(path, home);
    if path.is_absolute() {
        return Ok(path);
    }
    std::path::absolute(base.join(&path)).map_err(|source| Error::Io {
        what: format!(
            "cannot resolve {} path {} against the current directory",
            key.name(),
            path.display()
        ),
        source,
    })
}

/// `~` or `~/rest` with the home directory, when one is known; any other
/// path (including `~user/...`) as it is.
pub(super) fn expand_home(path: &Path, home: impl FnOnce() -> Option<PathBuf>) -> PathBuf {
    let mut components = path.components();
    match components.next() {
        Some(std::path::Component::Normal(first)) if first == "~" => match home() {
            Some(home) if components.as_path().as_os_str().is_empty() => home,
            Some(home) => home.join(components.as_path()),
            None => path.to_owned(),
        },
        _ => path.to_owned(),
    }
}

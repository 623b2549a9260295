//! Finding and reading the settings file, and the paths it holds.

use super::*;

// ---- files ----

#[test]
fn a_named_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, EVERY_KEY).unwrap();
    assert_eq!(
        Settings::load_from(Some(&flag(&path)), &[]).unwrap(),
        every_key_changed()
    );
}

#[test]
fn a_missing_named_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.toml");
    let shown = path.display();
    assert_eq!(
        usage(Settings::load_from(Some(&flag(&path)), &[])),
        format!(
            "settings file {shown} (named by --config) does not exist; create it or name \
             another file"
        )
    );
    let env = ConfigFile {
        path: path.clone(),
        source: ConfigSource::Env,
    };
    assert_eq!(
        usage(Settings::load_from(Some(&env), &[])),
        format!(
            "settings file {shown} (named by $GOALKEEPER_CONFIG) does not exist; create it or \
             name another file"
        )
    );
}

#[test]
fn a_missing_platform_file_means_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let platform = ConfigFile {
        path: dir.path().join("goalkeeper").join("config.toml"),
        source: ConfigSource::Platform,
    };
    let settings = Settings::load_from(Some(&platform), &sets(&["todo.enabled=false"])).unwrap();
    assert_eq!(settings, set("todo.enabled=false").unwrap());
}

#[test]
fn an_unreadable_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    // Not UTF-8; unlike a mode-0 file this cannot be read even as root.
    std::fs::write(&path, b"todo.enabled = \xff\xfe\n").unwrap();
    let error = Settings::load_from(Some(&flag(&path)), &[]).unwrap_err();
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    assert_eq!(error.kind(), ErrorKind::Storage);
    assert_eq!(
        error.to_string(),
        format!(
            "cannot read settings file {}: stream did not contain valid UTF-8",
            path.display()
        )
    );
}

#[test]
fn a_directory_is_not_a_settings_file() {
    let dir = tempfile::tempdir().unwrap();
    let shown = dir.path().display();
    assert_eq!(
        usage(Settings::load_from(Some(&flag(dir.path())), &[])),
        format!(
            "settings file {shown} (named by --config) is a directory; give the path of a \
             TOML file, e.g. {shown}/config.toml"
        )
    );
}

#[test]
fn the_file_is_located_by_flag_then_env_then_platform() {
    let platform = Some(PathBuf::from("/home/me/.config/goalkeeper/config.toml"));
    let located = |config: Option<&str>, env: Option<&str>| {
        ConfigFile::locate_with(
            config.map(Path::new),
            env.map(OsString::from),
            platform.clone(),
        )
        .map(|file| (file.path, file.source))
    };
    assert_eq!(
        located(Some("/a.toml"), Some("/b.toml")),
        Some(("/a.toml".into(), ConfigSource::Flag))
    );
    assert_eq!(
        located(None, Some("/b.toml")),
        Some(("/b.toml".into(), ConfigSource::Env))
    );
    assert_eq!(
        located(None, Some("")),
        Some((platform.clone().unwrap(), ConfigSource::Platform))
    );
    assert_eq!(
        located(None, None),
        Some((platform.clone().unwrap(), ConfigSource::Platform))
    );
    assert_eq!(ConfigFile::locate_with(None, None, None), None);
}

#[test]
fn the_platform_file_is_config_toml_in_the_goalkeeper_config_dir() {
    if let Some(path) = platform_config_file() {
        assert!(path.ends_with("config.toml"), "{}", path.display());
        assert!(path.is_absolute(), "{}", path.display());
    }
}

// ---- paths ----

#[test]
fn relative_paths_in_a_file_resolve_against_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "prompts.dir = \"prompts\"\nmemory.file = \"../memory.md\"\n\
         system_prompt.base = \"/abs/base.md\"\n",
    )
    .unwrap();
    let settings = Settings::load_from(Some(&flag(&path)), &[]).unwrap();
    assert_eq!(settings.prompts.dir, Some(dir.path().join("prompts")));
    assert_eq!(settings.memory.file, Some(dir.path().join("../memory.md")));
    assert_eq!(settings.system_prompt.base, Some("/abs/base.md".into()));
}

#[test]
fn relative_paths_in_from_toml_resolve_against_the_origin_directory() {
    let settings = file("prompts.dir = \"p\"").unwrap();
    assert_eq!(settings.prompts.dir, Some(PathBuf::from("/x/p")));
}

#[test]
fn relative_paths_from_set_resolve_against_the_current_directory() {
    let settings = set("prompts.dir=my/prompts").unwrap();
    assert_eq!(settings.prompts.dir, Some(cwd().join("my/prompts")));
    let settings = set("system_prompt.base=./base.md").unwrap();
    assert_eq!(settings.system_prompt.base, Some(cwd().join("base.md")));
}

#[test]
fn an_empty_path_clears_it() {
    let mut settings = file("prompts.dir = \"/p\"").unwrap();
    settings.apply_set("prompts.dir=").unwrap();
    assert_eq!(settings.prompts.dir, None);
    assert_eq!(file("memory.file = \"\"").unwrap().memory.file, None);
}

#[test]
fn a_leading_tilde_is_the_home_directory() {
    let home = || Some(PathBuf::from("/home/me"));
    assert_eq!(expand_home(Path::new("~"), home), PathBuf::from("/home/me"));
    assert_eq!(
        expand_home(Path::new("~/notes/m.md"), home),
        PathBuf::from("/home/me/notes/m.md")
    );
    assert_eq!(
        expand_home(Path::new("~bob/m.md"), home),
        PathBuf::from("~bob/m.md")
    );
    assert_eq!(
        expand_home(Path::new("a/~/b"), home),
        PathBuf::from("a/~/b")
    );
    assert_eq!(
        expand_home(Path::new("~/m.md"), || None),
        PathBuf::from("~/m.md")
    );
}

//! `goalkeeper backup PATH`: a consistent single-file copy of the database
//! (from PostgreSQL too: the copy is a SQLite file). `goalkeeper migrate
//! --to URL`: every session copied into another database, typically a
//! SQLite file into PostgreSQL for fleet mode.

use std::path::PathBuf;

use crate::{Error, Store};
use clap::Args;

use super::context::{Context, Outcome};

#[derive(Debug, Args)]
pub(crate) struct BackupArgs {
    /// The new file to write (never an existing one)
    pub(crate) path: PathBuf,
}

pub(crate) fn run(ctx: &Context, args: BackupArgs) -> Result<Outcome, Error> {
    let mut store = ctx.store()?;
    store.admin().backup(&args.path)?;
    out!("Wrote a copy of the database to {}", args.path.display());
    Ok(Outcome::Success)
}

#[derive(Debug, Args)]
pub(crate) struct MigrateArgs {
    /// The database to copy into: a postgres://user@host/db URL (or a new
    /// SQLite file). Refused if it already holds any of the sessions
    #[arg(long, value_name = "URL|PATH")]
    pub(crate) to: PathBuf,
}

pub(crate) fn migrate(ctx: &Context, args: MigrateArgs) -> Result<Outcome, Error> {
    let from = ctx.location()?;
    let to = ctx.located(args.to)?;
    if from.display() == to.display() {
        return Err(Error::Usage(format!(
            "--to names the database being copied ({}); give another one",
            to.display()
        )));
    }
    let mut source = Store::open_existing(&from)?;
    let mut target = Store::open(&to)?;
    let copied = source.admin().copy_into(&mut target)?;
    out!(
        "Copied {} sessions ({} goals, {} events, {} marks, {} pointers) from {} to {}",
        copied.sessions,
        copied.goals,
        copied.events,
        copied.marks,
        copied.pointers,
        from.display(),
        to.display()
    );
    Ok(Outcome::Success)
}

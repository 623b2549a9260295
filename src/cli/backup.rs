//! `goalkeeper backup PATH`: a consistent single-file copy of the database.

use std::path::PathBuf;

use clap::Args;
use goalkeeper::Error;

use super::{Context, Outcome};

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The new file to write (never an existing one)
    pub path: PathBuf,
}

pub fn run(ctx: &Context, args: BackupArgs) -> Result<Outcome, Error> {
    let store = ctx.store()?;
    store.backup(&args.path)?;
    out!("Wrote a copy of the database to {}", args.path.display());
    Ok(Outcome::Success)
}

//! `goalkeeper system-prompt` and `goalkeeper workspace link|status`: the
//! context resources around an agent (DESIGN.md §10).

use std::path::PathBuf;

use crate::Error;
use crate::integrations::claude_code::Acts;
use crate::prompt::{HiddenMessage, MessageKind};
use crate::resources::{self, AssembleOptions};
use clap::{Args, Subcommand};
use serde_json::json;

use super::context::{Context, Outcome};
use super::print_json;

#[derive(Debug, Args)]
pub(crate) struct SystemPromptArgs {
    /// The agent's working directory [default: the current directory]
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Where SOUL.md, memory/ and skills/ live [default: the working directory]
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum WorkspaceCommand {
    /// Make AGENTS.md the single source: CLAUDE.md and GEMINI.md become links to it
    Link {
        /// The directory holding AGENTS.md
        dir: PathBuf,
    },
    /// Report what is linked and what drifted
    Status {
        /// The directory holding AGENTS.md
        dir: PathBuf,
    },
}

impl WorkspaceCommand {
    /// Whom the command acts as (`cli/acting.rs`): `link` writes the
    /// person's files.
    pub(crate) fn acts(&self) -> Acts {
        match self {
            WorkspaceCommand::Link { .. } => Acts::Person,
            WorkspaceCommand::Status { .. } => Acts::Nobody,
        }
    }
}

pub(crate) fn system_prompt(ctx: &Context, args: SystemPromptArgs) -> Result<Outcome, Error> {
    let settings = ctx.settings()?;
    let cwd = match args.cwd {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|source| Error::Io {
            what: "cannot read the current directory".into(),
            source,
        })?,
    };
    let options = AssembleOptions {
        workspace: args.workspace.unwrap_or_else(|| cwd.clone()),
        cwd,
        base_prompt: settings.system_prompt.base.clone(),
        now_ms: ctx.now_ms,
    };
    let assembly = resources::assemble(&options);
    for diagnostic in &assembly.diagnostics {
        note!("{diagnostic}");
    }
    let text = assembly.to_text();
    if ctx.json {
        let label = format!(
            "system prompt: {} blocks · {} diagnostics",
            assembly.blocks.len(),
            assembly.diagnostics.len()
        );
        let message = HiddenMessage::new(MessageKind::SystemPrompt, text, label, ctx.now_ms);
        print_json(&json!({
            "message": message,
            "blocks": assembly.blocks,
            "diagnostics": assembly.diagnostics,
        }));
    } else {
        out!("{text}");
    }
    Ok(Outcome::Success)
}

pub(crate) fn workspace(ctx: &Context, command: WorkspaceCommand) -> Result<Outcome, Error> {
    let lines = match command {
        WorkspaceCommand::Link { dir } => {
            let report = resources::link(&dir, ctx.now_ms)?;
            if ctx.json {
                print_json(&report);
                return Ok(Outcome::Success);
            }
            report.lines()
        }
        WorkspaceCommand::Status { dir } => {
            let report = resources::status(&dir)?;
            if ctx.json {
                print_json(&report);
                return Ok(Outcome::Success);
            }
            report.lines()
        }
    };
    for line in lines {
        out!("{line}");
    }
    Ok(Outcome::Success)
}

//! How a goalkeeper command line reads, as the binary's own parser reads
//! it: whom a command acts as ([`Acts`]) and the reader the command line
//! hands the hooks ([`ReadLine`]), for Claude Code's guard on the agent's
//! shell (`claude_code::guard`). The library holds no command-line
//! definition; `cli::acting` does, and passes its reader in.

/// Whom a goalkeeper command acts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acts {
    /// The agent: the agent's limits apply (`todo apply`, `goal apply`,
    /// `mcp`).
    Agent,
    /// Nobody: it reads, or changes only what is the agent's own (views,
    /// `context`, `todo export`, help).
    Nobody,
    /// The person: a person's command (`goal budget`, `todo done`,
    /// `todo release`), one the host runs on the person's behalf (a hook,
    /// `continuation`), or one that writes the person's files (`install`).
    Person,
}

impl Acts {
    /// The actor of the command's calls: the agent's for a command that
    /// acts as the agent, else the person's (a person's read is the
    /// person's).
    pub fn actor(self) -> crate::Actor {
        match self {
            Acts::Agent => crate::Actor::Agent,
            Acts::Nobody | Acts::Person => crate::Actor::User,
        }
    }
}

/// What a goalkeeper command line does, as the binary's own parser reads
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// It runs `command` (its subcommand words, `todo done`), which acts
    /// as `acts`.
    Runs {
        /// The command's words, `goal budget`.
        command: String,
        /// Whom it acts as.
        acts: Acts,
    },
    /// The parser refuses it: what it says, in one line.
    Unknown(String),
}

/// Reads the words after `goalkeeper` on a command line.
pub type ReadLine = fn(&[String]) -> Reading;

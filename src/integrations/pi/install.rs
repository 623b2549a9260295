//! `install pi`: writes the extension into a project's
//! `.pi/extensions/goalkeeper.ts`, where pi discovers it, with the
//! goalkeeper command and the tools (their descriptions and JSON Schemas)
//! filled in. A file there that goalkeeper did not write is refused (it may
//! be the user's own extension); one it wrote is replaced, the previous
//! version backed up; a second run changes nothing.

use std::path::Path;

use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::integrations::agent_tools::ToolSpec;
use crate::integrations::install::{FileReport, InstallReport, open_project};
use crate::prompt::Templates;

/// The extension's source as shipped; `install pi` fills in the command
/// and the tools.
pub const EXTENSION: &str = include_str!("goalkeeper.ts");

/// Where the extension goes, relative to the project.
pub const EXTENSION_PATH: &str = ".pi/extensions/goalkeeper.ts";

/// How a file goalkeeper wrote begins.
const HEADER: &str = "/**\n * goalkeeper for pi:";

const COMMAND_LINE: &str = "const GOALKEEPER: string = findGoalkeeper(\"goalkeeper\");";
const TOOLS_LINE: &str = "const TOOLS: ToolSpec[] = [];";
const PLATFORMS_LINE: &str = "const PLATFORM_PACKAGES: Record<string, string> = {};";

/// The extension with `command` and the tools filled in.
pub fn extension(command: &str, templates: &Templates) -> Result<String> {
    extension_with(command, &[], templates)
}

/// The extension of goalkeeper's pi package: it finds the binary beside
/// itself, or in the npm package of `platforms` (`<platform> <arch>`,
/// package) that matches the machine.
pub(crate) fn package_extension(
    platforms: &[(String, String)],
    templates: &Templates,
) -> Result<String> {
    extension_with("", platforms, templates)
}

fn extension_with(
    command: &str,
    platforms: &[(String, String)],
    templates: &Templates,
) -> Result<String> {
    let tools: Vec<Value> = ToolSpec::all(templates)?
        .into_iter()
        .map(|spec| {
            json!({"name": spec.name, "description": spec.description, "parameters": spec.input_schema})
        })
        .collect();
    let tools = serde_json::to_string_pretty(&tools).expect("JSON serializes");
    Ok(EXTENSION
        .replacen(
            COMMAND_LINE,
            &format!(
                "const GOALKEEPER: string = findGoalkeeper({});",
                serde_json::to_string(command).expect("a string serializes")
            ),
            1,
        )
        .replacen(
            PLATFORMS_LINE,
            &format!(
                "const PLATFORM_PACKAGES: Record<string, string> = {};",
                serde_json::to_string_pretty(&Value::Object(
                    platforms
                        .iter()
                        .map(|(key, package)| (key.clone(), Value::from(package.as_str())))
                        .collect()
                ))
                .expect("JSON serializes")
            ),
            1,
        )
        .replacen(
            TOOLS_LINE,
            &format!("const TOOLS: ToolSpec[] = {tools};"),
            1,
        ))
}

/// Installs into `project` with `command` as the goalkeeper executable.
pub fn install_pi(
    project: &Path,
    command: &str,
    templates: &Templates,
    now_ms: i64,
) -> Result<InstallReport> {
    let dir = open_project(project)?;
    let rel = Path::new(EXTENSION_PATH);
    let path = dir.path().join(rel);
    let text = extension(command, templates)?;
    let existing = dir.read(rel)?;
    if let Some(file) = &existing
        && !file.bytes().starts_with(HEADER.as_bytes())
    {
        return Err(Error::Rejected(format!(
            "{} exists and was not written by goalkeeper; move it away, then install again (nothing was changed)",
            path.display()
        )));
    }
    let stamp = crate::time::utc_stamp(now_ms);
    let done = dir.replace(rel, text.as_bytes(), existing.as_ref(), &stamp)?;
    let change = if done.written {
        "extension: written (the todo and goal tools, the goal-mode context, continuations, usage)"
    } else {
        "extension: already up to date"
    };
    Ok(InstallReport {
        files: vec![FileReport {
            path: done.path,
            backup: done.backup,
            changes: vec![change.to_owned()],
            written: done.written,
        }],
    })
}

//! The prompt templates: Handlebars files under `prompts/`, compiled into the
//! binary and overridable file by file from a user directory (`prompts.dir`).
//!
//! Rendering uses no HTML escaping (values are sanitized explicitly before
//! they reach a template) and strict mode (a missing value is an error, not
//! an empty string). Afterwards trailing whitespace is removed from every
//! line and the output ends without a newline.
//!
//! The built-in texts render through [`super::subset`], which reads the
//! part of Handlebars they use without Handlebars' parser and renders the
//! same bytes; an override goes through Handlebars itself, and so does
//! every error message.

use std::borrow::Cow;
use std::path::Path;
use std::sync::OnceLock;

use handlebars::{Handlebars, TemplateError};
use serde::Serialize;

use super::subset;
use crate::error::{Error, Result};

/// Every built-in template: its name (the path under `prompts/` without
/// `.md`) and its text.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "goal-todo-context",
        include_str!("../../prompts/goal-todo-context.md"),
    ),
    (
        "todo-context",
        include_str!("../../prompts/todo-context.md"),
    ),
    (
        "goal-todo-context-extended",
        include_str!("../../prompts/goal-todo-context-extended.md"),
    ),
    (
        "goal-mode-context",
        include_str!("../../prompts/goal-mode-context.md"),
    ),
    ("goal-active", include_str!("../../prompts/goal-active.md")),
    (
        "goal-continuation",
        include_str!("../../prompts/goal-continuation.md"),
    ),
    (
        "goal-budget-limit",
        include_str!("../../prompts/goal-budget-limit.md"),
    ),
    (
        "todo-error-reminder",
        include_str!("../../prompts/todo-error-reminder.md"),
    ),
    (
        "todo-incomplete-reminder",
        include_str!("../../prompts/todo-incomplete-reminder.md"),
    ),
    (
        "todo-eager-preferred",
        include_str!("../../prompts/todo-eager-preferred.md"),
    ),
    (
        "todo-eager-always",
        include_str!("../../prompts/todo-eager-always.md"),
    ),
    ("memory", include_str!("../../prompts/memory.md")),
    ("tools/todo", include_str!("../../prompts/tools/todo.md")),
    ("tools/goal", include_str!("../../prompts/tools/goal.md")),
];

/// The templates, built-in or overridden. An override is compiled when it
/// is loaded, so a broken file is reported at once; a built-in template is
/// parsed (by [`super::subset`]) the first time it is rendered, and
/// compiled by Handlebars only when a render fails, for the error message.
/// Handlebars' compile of a template costs more than the rest of a
/// `context` command, so no process compiles a template it does not
/// render, and a built-in one is not compiled at all while the subset
/// renders it.
pub struct Templates {
    entries: Vec<Entry>,
    tools: ToolNames,
}

/// The names the host shows the model for goalkeeper's two tools. Every
/// template can use them as `{{todo_tool}}` and `{{goal_tool}}` (a value
/// the data passes itself wins), so a prompt names the tool the model can
/// actually call: a host may prefix MCP tools (Claude Code shows
/// `mcp__goalkeeper__todo`). Defaults: `todo` and `goal`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolNames {
    /// The todo tool's name as the model sees it.
    pub todo: String,
    /// The goal tool's name as the model sees it.
    pub goal: String,
}

impl Default for ToolNames {
    fn default() -> ToolNames {
        ToolNames {
            todo: crate::todo::TOOL_NAME.to_owned(),
            goal: crate::goal::TOOL_NAME.to_owned(),
        }
    }
}

/// One template: its text and, from its first use on, its compiled form.
struct Entry {
    name: &'static str,
    text: Cow<'static, str>,
    overridden: bool,
    /// A built-in text parsed into the subset (`None`: it is not in the
    /// subset, which `every_builtin_is_in_the_subset` rules out).
    subset: OnceLock<Option<subset::Template<'static>>>,
    compiled: OnceLock<Handlebars<'static>>,
}

/// A registry holding template `name` alone, with goalkeeper's rendering
/// rules: strict mode, no HTML escaping.
pub(super) fn compile(
    name: &str,
    text: &str,
) -> std::result::Result<Handlebars<'static>, TemplateError> {
    let mut registry = Handlebars::new();
    registry.set_strict_mode(true);
    registry.register_escape_fn(handlebars::no_escape);
    registry.register_template_string(name, text)?;
    Ok(registry)
}

/// The largest prompt override accepted (the built-in templates are a few
/// hundred bytes to a few kilobytes).
pub(crate) const MAX_TEMPLATE_BYTES: usize = 64 * 1024;

/// How deep blocks (`{{#if}}…{{/if}}`) and subexpressions (`(…)`) may nest
/// in a prompt override. The template parser recurses once per level, so a
/// file nested thousands of levels deep would overflow the stack of every
/// command that loads the templates, hooks included.
pub(crate) const MAX_TEMPLATE_NESTING: usize = 32;

/// The text of an override: UTF-8, at most [`MAX_TEMPLATE_BYTES`].
fn read_override(path: &Path) -> Result<String> {
    use std::io::Read;
    let io = |source| Error::Io {
        what: format!("cannot read prompt override {}", path.display()),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_TEMPLATE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > MAX_TEMPLATE_BYTES {
        return Err(Error::Usage(format!(
            "prompt template {} is larger than {} KiB; shorten it",
            path.display(),
            MAX_TEMPLATE_BYTES / 1024
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::Usage(format!(
            "prompt template {} is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Refuses a template whose blocks or subexpressions nest deeper than
/// [`MAX_TEMPLATE_NESTING`], before the parser sees it. Counts over-
/// approximate (a `(` inside a string literal counts too), which only
/// matters for templates far stranger than any prompt.
fn check_nesting(text: &str) -> std::result::Result<(), String> {
    let mut blocks = 0usize;
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let inner = after[..end].trim_start_matches(['{', '~']).trim_start();
        if inner.starts_with('!') {
            // A comment: `{{!-- … --}}` may hold `}}`.
            let close = if inner.starts_with("!--") {
                after.find("--}}").map(|i| i + 4)
            } else {
                Some(end + 2)
            };
            rest = &after[close.unwrap_or(after.len())..];
            continue;
        }
        if inner.starts_with('#') || (inner.starts_with('^') && inner.len() > 1) {
            blocks += 1;
        } else if inner.starts_with('/') {
            blocks = blocks.saturating_sub(1);
        }
        let mut parens = 0usize;
        for c in after[..end].chars() {
            match c {
                '(' => parens += 1,
                ')' => parens = parens.saturating_sub(1),
                _ => {}
            }
            if parens > MAX_TEMPLATE_NESTING {
                return Err(format!(
                    "its subexpressions nest more than {MAX_TEMPLATE_NESTING} levels deep"
                ));
            }
        }
        if blocks > MAX_TEMPLATE_NESTING {
            return Err(format!(
                "its blocks nest more than {MAX_TEMPLATE_NESTING} levels deep"
            ));
        }
        rest = &after[end + 2..];
    }
    Ok(())
}

impl Templates {
    /// The built-in templates only.
    pub fn builtin() -> Templates {
        Templates::load(None).expect("the built-in templates compile")
    }

    /// The built-in templates, each replaced by `<dir>/<name>.md` when that
    /// file exists. Files with other names are ignored. An override that
    /// cannot be read or does not compile is an error naming the file.
    pub fn load(dir: Option<&Path>) -> Result<Templates> {
        if let Some(dir) = dir
            && !dir.is_dir()
        {
            return Err(Error::Usage(format!(
                "prompts.dir {} is not a directory; create it or fix the setting",
                dir.display()
            )));
        }
        let mut entries = Vec::with_capacity(BUILTIN.len());
        for (name, builtin) in BUILTIN {
            let path = dir.map(|d| d.join(format!("{name}.md")));
            let entry = match &path {
                Some(path) if path.is_file() => {
                    let text = read_override(path)?;
                    check_nesting(&text).map_err(|why| {
                        Error::Usage(format!(
                            "prompt template {} is refused: {why}; simplify the template",
                            path.display()
                        ))
                    })?;
                    let compiled = compile(name, &text).map_err(|e| {
                        Error::Usage(format!(
                            "prompt template {} does not compile: {e}",
                            path.display()
                        ))
                    })?;
                    Entry {
                        name,
                        text: Cow::Owned(text),
                        overridden: true,
                        subset: OnceLock::from(None),
                        compiled: OnceLock::from(compiled),
                    }
                }
                _ => Entry {
                    name,
                    text: Cow::Borrowed(builtin),
                    overridden: false,
                    subset: OnceLock::new(),
                    compiled: OnceLock::new(),
                },
            };
            entries.push(entry);
        }
        Ok(Templates {
            entries,
            tools: ToolNames::default(),
        })
    }

    /// The same templates, naming the tools as `tools` says.
    pub fn with_tool_names(mut self, tools: ToolNames) -> Templates {
        self.tools = tools;
        self
    }

    /// The tool names the templates use.
    pub fn tool_names(&self) -> &ToolNames {
        &self.tools
    }

    /// True when template `name` is the built-in text, not an override.
    pub(crate) fn is_builtin(&self, name: &str) -> bool {
        self.entries.iter().any(|e| e.name == name && !e.overridden)
    }

    /// Renders template `name` with `data`, then strips trailing whitespace
    /// from every line and the final newline.
    pub fn render(&self, name: &str, data: &impl Serialize) -> Result<String> {
        let Some(entry) = self.entries.iter().find(|e| e.name == name) else {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            return Err(Error::Usage(format!(
                "unknown prompt template {name:?}; the templates are {}",
                names.join(", ")
            )));
        };
        let mut data = serde_json::to_value(data)
            .map_err(|e| Error::Usage(format!("cannot render prompt {name}: {e}")))?;
        if let serde_json::Value::Object(map) = &mut data {
            map.entry("todo_tool")
                .or_insert_with(|| self.tools.todo.clone().into());
            map.entry("goal_tool")
                .or_insert_with(|| self.tools.goal.clone().into());
            map.entry("verify")
                .or_insert_with(|| crate::check::verify_command(&crate::check::Scope::Goal).into());
        }
        let failed = match entry.subset(name) {
            Some(template) => match template.render(&data) {
                Ok(raw) => return Ok(tidy(&raw)),
                Err(failed) => Some(failed),
            },
            None => None,
        };
        let registry = entry.compiled.get_or_init(|| {
            // Only built-in texts reach this; `every_builtin_compiles`
            // checks each of them.
            compile(name, &entry.text).expect("the built-in templates compile")
        });
        let raw = registry
            .render(name, &data)
            .map_err(|e| Error::Usage(format!("cannot render prompt {name}: {e}")))?;
        // Handlebars rendered what the subset refused: a bug of the subset
        // (the property tests compare the two), and Handlebars' text stands.
        debug_assert!(
            failed.is_none(),
            "the subset refused {name} ({failed:?}), Handlebars rendered it"
        );
        Ok(tidy(&raw))
    }
}

impl Entry {
    /// The built-in text parsed into the subset, from the first call on;
    /// `None` for an override.
    fn subset(&self, name: &str) -> Option<&subset::Template<'static>> {
        self.subset
            .get_or_init(|| match self.text {
                Cow::Borrowed(text) if !self.overridden => {
                    let parsed = subset::parse(text);
                    debug_assert!(parsed.is_ok(), "{name}: {parsed:?}");
                    parsed.ok()
                }
                _ => None,
            })
            .as_ref()
    }
}

/// Trailing whitespace off every line, no trailing newline.
pub(crate) fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.truncate(out.trim_end_matches('\n').len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_builtin_compiles() {
        for (name, text) in BUILTIN {
            if let Err(e) = compile(name, text) {
                panic!("{name}: {e}");
            }
        }
    }

    #[test]
    fn strict_mode_rejects_missing_values() {
        let err = Templates::builtin()
            .render("todo-error-reminder", &json!({}))
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot render prompt todo-error-reminder:"),
            "{err}"
        );
    }

    #[test]
    fn values_are_not_html_escaped() {
        let text = Templates::builtin()
            .render("todo-error-reminder", &json!({"error": "<a> & \"b\""}))
            .unwrap();
        assert!(text.contains("\n<a> & \"b\"\n"), "{text}");
    }

    #[test]
    fn unknown_template_lists_the_names() {
        let err = Templates::builtin().render("nope", &json!({})).unwrap_err();
        assert!(err.to_string().starts_with(
            "unknown prompt template \"nope\"; the templates are goal-todo-context, "
        ));
    }

    #[test]
    fn tidy_strips_trailing_whitespace_and_final_newlines() {
        assert_eq!(tidy("a  \n b\t\n\n"), "a\n b");
    }

    #[test]
    fn an_override_replaces_one_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("todo-error-reminder.md"), "ERR {{error}}\n").unwrap();
        let templates = Templates::load(Some(dir.path())).unwrap();
        assert_eq!(
            templates
                .render("todo-error-reminder", &json!({"error": "x"}))
                .unwrap(),
            "ERR x"
        );
        // The others stay built in.
        assert!(
            templates
                .render("todo-eager-always", &json!({}))
                .unwrap()
                .starts_with("<todo_plan>")
        );
    }

    #[test]
    fn a_missing_prompts_dir_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("prompts");
        let err = Templates::load(Some(&missing)).err().unwrap();
        assert_eq!(
            err.to_string(),
            format!(
                "prompts.dir {} is not a directory; create it or fix the setting",
                missing.display()
            )
        );
    }

    #[test]
    fn a_broken_override_names_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("goal-active.md");
        std::fs::write(&path, "{{#if x}}unclosed").unwrap();
        let err = Templates::load(Some(dir.path())).err().unwrap();
        assert!(
            err.to_string().starts_with(&format!(
                "prompt template {} does not compile:",
                path.display()
            )),
            "{err}"
        );
    }
}

//! Rendering a parsed template of the subset: Handlebars' lookups,
//! truthiness and printing of JSON, in strict mode.

use std::fmt::Write as _;

use serde_json::Value;

use super::{Failed, Node, Template};

impl Template<'_> {
    /// The text for `data`, before goalkeeper's per-line trim.
    pub(crate) fn render(&self, data: &Value) -> Result<String, Failed> {
        let mut out = String::with_capacity(4096);
        render_nodes(&self.nodes, data, &mut out)?;
        Ok(out)
    }
}

/// Field `name` of `scope` as Handlebars looks it up: a key of an object,
/// nothing in a string, number, boolean or null, and an error in a list
/// unless the name is an index.
fn lookup<'v>(scope: &'v Value, name: &str) -> Result<Option<&'v Value>, Failed> {
    match scope {
        Value::Object(map) => Ok(map.get(name)),
        Value::Array(list) => name
            .parse::<usize>()
            .map(|i| list.get(i))
            .map_err(|_| Failed::NameInList(name.to_owned())),
        _ => Ok(None),
    }
}

/// Handlebars' truthiness (`includeZero` off).
fn truthy(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(f64::is_normal),
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Array(list) => !list.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// `value` printed as Handlebars prints JSON.
fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => out.push_str(s),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Null => {}
        Value::Array(list) => {
            out.push('[');
            for (i, item) in list.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(_) => out.push_str("[object]"),
    }
}

fn render_nodes(nodes: &[Node<'_>], scope: &Value, out: &mut String) -> Result<(), Failed> {
    for node in nodes {
        match node {
            Node::Text(text) => out.push_str(text),
            Node::Value(name) => match lookup(scope, name)? {
                Some(value) => write_value(value, out),
                None => return Err(Failed::Missing((*name).to_owned())),
            },
            Node::If {
                name,
                negate,
                then,
                otherwise,
            } => {
                let value = lookup(scope, name)?;
                if value.is_some_and(truthy) != *negate {
                    render_nodes(then, scope, out)?;
                } else if let Some(otherwise) = otherwise {
                    render_nodes(otherwise, scope, out)?;
                }
            }
            Node::Each {
                name,
                body,
                otherwise,
            } => match lookup(scope, name)? {
                Some(Value::Array(list)) if !list.is_empty() || otherwise.is_none() => {
                    for item in list {
                        render_nodes(body, item, out)?;
                    }
                }
                Some(Value::Object(map)) if !map.is_empty() || otherwise.is_none() => {
                    for item in map.values() {
                        render_nodes(body, item, out)?;
                    }
                }
                _ => match otherwise {
                    Some(otherwise) => render_nodes(otherwise, scope, out)?,
                    None => return Err(Failed::NotIterable((*name).to_owned())),
                },
            },
        }
    }
    Ok(())
}

//! How a task row and a task's fields are written in a patch: a JSON
//! array, as short as the row allows (a row without agents, `after` or a
//! check is written as every list was before those existed), read back
//! whichever form it was written in.

use serde::{Deserialize, Serialize};

use super::{Fields, TaskRow, TaskSet, solo};
use crate::todo::{DroppedBy, Status};

/// A stored row, as an array: `[phase, pos, content, status, blocker,
/// dropped_by]`, and `agent, since_ms, after` after those when any is set,
/// and the check after those when the task has one.
#[derive(Deserialize)]
#[serde(untagged)]
enum RowWire {
    Checked(
        i64,
        i64,
        String,
        Status,
        Option<String>,
        Option<DroppedBy>,
        Option<String>,
        Option<i64>,
        Option<String>,
        String,
    ),
    Team(
        i64,
        i64,
        String,
        Status,
        Option<String>,
        Option<DroppedBy>,
        Option<String>,
        Option<i64>,
        Option<String>,
    ),
    Solo(i64, i64, String, Status, Option<String>, Option<DroppedBy>),
}

/// A stored status change, as [`RowWire`] without the content.
#[derive(Deserialize)]
#[serde(untagged)]
enum SetWire {
    Checked(
        i64,
        i64,
        Status,
        Option<String>,
        Option<DroppedBy>,
        Option<String>,
        Option<i64>,
        Option<String>,
        String,
    ),
    Team(
        i64,
        i64,
        Status,
        Option<String>,
        Option<DroppedBy>,
        Option<String>,
        Option<i64>,
        Option<String>,
    ),
    Solo(i64, i64, Status, Option<String>, Option<DroppedBy>),
}

impl Serialize for TaskRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ((p, k), f) = (self.key, &self.fields);
        let head = (p, k, &self.content, f.status, &f.blocker, f.dropped_by);
        let (p, k, c, st, b, d) = head;
        match &f.check {
            Some(check) => (p, k, c, st, b, d, &f.agent, f.since_ms, &f.after, check).serialize(s),
            None if solo(f) => head.serialize(s),
            None => (p, k, c, st, b, d, &f.agent, f.since_ms, &f.after).serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for TaskRow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TaskRow, D::Error> {
        let (p, k, content, status, blocker, dropped_by, agent, since_ms, after, check) =
            match RowWire::deserialize(d)? {
                RowWire::Checked(p, k, c, s, b, d, a, t, f, x) => {
                    (p, k, c, s, b, d, a, t, f, Some(x))
                }
                RowWire::Team(p, k, c, s, b, d, a, t, f) => (p, k, c, s, b, d, a, t, f, None),
                RowWire::Solo(p, k, c, s, b, d) => (p, k, c, s, b, d, None, None, None, None),
            };
        Ok(TaskRow {
            key: (p, k),
            content,
            fields: Fields {
                status,
                blocker,
                dropped_by,
                agent,
                since_ms,
                after,
                check,
            },
        })
    }
}

impl Serialize for TaskSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ((p, k), f) = (self.key, &self.fields);
        let head = (p, k, f.status, &f.blocker, f.dropped_by);
        let (p, k, st, b, d) = head;
        match &f.check {
            Some(check) => (p, k, st, b, d, &f.agent, f.since_ms, &f.after, check).serialize(s),
            None if solo(f) => head.serialize(s),
            None => (p, k, st, b, d, &f.agent, f.since_ms, &f.after).serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for TaskSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TaskSet, D::Error> {
        let (p, k, status, blocker, dropped_by, agent, since_ms, after, check) =
            match SetWire::deserialize(d)? {
                SetWire::Checked(p, k, s, b, d, a, t, f, x) => (p, k, s, b, d, a, t, f, Some(x)),
                SetWire::Team(p, k, s, b, d, a, t, f) => (p, k, s, b, d, a, t, f, None),
                SetWire::Solo(p, k, s, b, d) => (p, k, s, b, d, None, None, None, None),
            };
        Ok(TaskSet {
            key: (p, k),
            fields: Fields {
                status,
                blocker,
                dropped_by,
                agent,
                since_ms,
                after,
                check,
            },
        })
    }
}

//! Reading an `init` call: its `list` of phases, or its `items` with an
//! optional `phase`, and the leftovers of a model that fills every field.

use serde_json::Value;

use super::{Op, PhaseItems, Reader, decode_json, is_empty, kind_of};
use crate::todo::text;

impl Reader {
    /// The phases of an `init`: an array of `{"phase", "items"}` objects,
    /// with JSON sent as a string decoded and one phase object read as a
    /// list of one.
    fn phases(&mut self, value: &Value) -> Option<Vec<PhaseItems>> {
        const SHAPE: &str = "{\"phase\": ..., \"items\": [...]}";
        let decoded;
        let value = match value {
            Value::String(text) => match decode_json(text) {
                Some(v) => {
                    self.repair("decoded `list`, JSON sent as a string".into());
                    decoded = v;
                    &decoded
                }
                None => {
                    return self.fail(format!(
                        "field `list` must be an array of {SHAPE} objects, not a string"
                    ));
                }
            },
            _ => value,
        };
        let one;
        let array = match value {
            Value::Array(array) => array.as_slice(),
            Value::Object(_) => {
                self.repair("read `list`, one phase object, as a list of one phase".into());
                one = [value.clone()];
                &one[..]
            }
            other => {
                return self.fail(format!(
                    "field `list` must be an array of {SHAPE} objects, not {}",
                    kind_of(other)
                ));
            }
        };
        let before = self.errors.len();
        let mut phases = Vec::with_capacity(array.len());
        for (i, entry) in array.iter().enumerate() {
            let decoded;
            let entry = match entry {
                Value::String(text) => match decode_json(text) {
                    Some(object @ Value::Object(_)) => {
                        self.repair(format!(
                            "decoded `list[{i}]`, a JSON object sent as a string"
                        ));
                        decoded = object;
                        &decoded
                    }
                    _ => entry,
                },
                _ => entry,
            };
            let Some(object) = entry.as_object() else {
                self.errors.push(format!(
                    "field `list[{i}]` must be an object {SHAPE}, not {}",
                    kind_of(entry)
                ));
                continue;
            };
            for key in object.keys() {
                if key != "phase" && key != "items" {
                    self.errors.push(format!(
                        "unknown field `list[{i}].{key}`; each phase takes phase and items"
                    ));
                }
            }
            let name = match object.get("phase").filter(|v| !v.is_null()) {
                Some(v) => self.text(v, &format!("list[{i}].phase"), text::phase_name),
                None => self.fail(format!(
                    "field `list[{i}].phase` is missing; name the phase"
                )),
            };
            let items = match object.get("items").filter(|v| !v.is_null()) {
                Some(v) => self.items(v, &format!("list[{i}].items")),
                None => Some(Vec::new()),
            };
            if let (Some(name), Some(items)) = (name, items) {
                phases.push(PhaseItems { name, items });
            }
        }
        (self.errors.len() == before).then_some(phases)
    }

    /// `init`'s phases: from `list`, or from `items` with an optional
    /// `phase` ("Tasks" when none is given).
    pub(super) fn init(
        &mut self,
        list: Option<&Value>,
        items: Option<&Value>,
        phase: Option<&Value>,
    ) -> Option<Op> {
        // An empty `list` beside real `items` (or the reverse) is a
        // leftover of a schema-filling model: the other one is the call.
        let given = |v: Option<&Value>| v.is_some_and(|v| !is_empty(v));
        let (list, items) = match (list, items) {
            (Some(l), Some(i)) if given(Some(l)) && !given(Some(i)) => {
                if !i.is_null() {
                    self.repair("ignored `items`, given empty beside `list`".into());
                }
                (Some(l), None)
            }
            (Some(l), Some(i)) if given(Some(i)) && !given(Some(l)) => {
                if !l.is_null() {
                    self.repair("ignored `list`, given empty beside `items`".into());
                }
                (None, Some(i))
            }
            (l, i) => (l.filter(|v| !v.is_null()), i.filter(|v| !v.is_null())),
        };
        let phase = match phase {
            Some(v) if is_empty(v) => {
                if !v.is_null() {
                    self.repair(if list.is_some() {
                        "ignored the empty top-level `phase`".into()
                    } else {
                        "ignored the empty `phase`; the tasks go to phase \"Tasks\"".into()
                    });
                }
                None
            }
            Some(v) => match self.text(v, "phase", text::phase_name) {
                Some(name) => Some(name),
                None => return None,
            },
            None => None,
        };
        let phases = match (list, items) {
            (Some(_), Some(_)) => {
                return self.fail("`init` takes either `list` or `items`, not both".into());
            }
            (Some(list), None) => {
                let phases = self.phases(list)?;
                if phase.is_some() {
                    return self.fail(
                        "`init` with `list` names its phases inside the list; drop the top-level `phase`"
                            .into(),
                    );
                }
                phases
            }
            (None, Some(items)) => vec![PhaseItems {
                name: phase.unwrap_or_else(|| "Tasks".to_owned()),
                items: self.items(items, "items")?,
            }],
            (None, None) => {
                return self.fail(
                    "`init` needs `list` ([{\"phase\": ..., \"items\": [...]}]) or `items`".into(),
                );
            }
        };
        if phases.iter().all(|p| p.items.is_empty()) {
            return self.fail(
                "`init` needs at least one task; to clear the list use `rm` without a target"
                    .into(),
            );
        }
        Some(Op::Init(phases))
    }
}

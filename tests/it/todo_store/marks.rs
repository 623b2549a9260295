//! Integration state in the store: per-session marks (removed with their
//! session) and global pointers (set, swapped, taken once).

use super::common::*;
use super::sid;

#[test]
fn marks_belong_to_their_session_and_go_with_it() {
    let mut s = store();
    let (a, b) = (sid("a"), sid("b"));
    s.set_session_mark(&a, "cursor", "10", NOW).unwrap();
    s.set_session_mark(&a, "cursor", "20", NOW + 1).unwrap();
    s.set_session_mark(&b, "cursor", "5", NOW + 2).unwrap();
    assert_eq!(s.session_mark(&a, "cursor").unwrap().as_deref(), Some("20"));
    assert_eq!(s.session_mark(&b, "cursor").unwrap().as_deref(), Some("5"));
    assert_eq!(s.session_mark(&a, "other").unwrap(), None);
    // A mark creates its session row.
    assert_eq!(s.session(&a).unwrap().unwrap().updated_ms, NOW + 1);
    s.remove_session(&a).unwrap();
    assert_eq!(s.session_mark(&a, "cursor").unwrap(), None);
    assert_eq!(s.session_mark(&b, "cursor").unwrap().as_deref(), Some("5"));
}

#[test]
fn a_pointer_is_set_swapped_and_taken_once() {
    let mut s = store();
    assert_eq!(s.pointer("dir").unwrap(), None);
    s.set_pointer("dir", "one", NOW).unwrap();
    assert_eq!(
        s.swap_pointer("dir", "two", NOW + 1).unwrap().as_deref(),
        Some("one")
    );
    assert_eq!(s.pointer("dir").unwrap().as_deref(), Some("two"));
    assert_eq!(s.take_pointer("dir").unwrap().as_deref(), Some("two"));
    assert_eq!(s.take_pointer("dir").unwrap(), None);
    assert_eq!(s.pointer("dir").unwrap(), None);
}

//! Integration state in the store: per-session marks (removed with their
//! session) and global pointers (set, swapped, taken once).

use super::common::*;
use super::sid;

#[test]
fn marks_belong_to_their_session_and_go_with_it() {
    let mut s = store();
    let (a, b) = (sid("a"), sid("b"));
    s.write(&a, |tx| tx.set_mark("cursor", "10", NOW)).unwrap();
    s.write(&a, |tx| tx.set_mark("cursor", "20", NOW + 1))
        .unwrap();
    s.write(&b, |tx| tx.set_mark("cursor", "5", NOW + 2))
        .unwrap();
    assert_eq!(
        s.read(&a, |tx| tx.mark("cursor")).unwrap().as_deref(),
        Some("20")
    );
    assert_eq!(
        s.read(&b, |tx| tx.mark("cursor")).unwrap().as_deref(),
        Some("5")
    );
    assert_eq!(s.read(&a, |tx| tx.mark("other")).unwrap(), None);
    // A mark creates its session row.
    assert_eq!(
        s.read(&a, |tx| tx.info()).unwrap().unwrap().updated_ms,
        NOW + 1
    );
    s.admin().remove_session(&a).unwrap();
    assert_eq!(s.read(&a, |tx| tx.mark("cursor")).unwrap(), None);
    assert_eq!(
        s.read(&b, |tx| tx.mark("cursor")).unwrap().as_deref(),
        Some("5")
    );
}

#[test]
fn a_pointer_is_set_swapped_and_taken_once() {
    let mut s = store();
    assert_eq!(s.admin().pointer("dir").unwrap(), None);
    s.admin().set_pointer("dir", "one", NOW).unwrap();
    assert_eq!(
        s.admin()
            .swap_pointer("dir", "two", NOW + 1)
            .unwrap()
            .as_deref(),
        Some("one")
    );
    assert_eq!(s.admin().pointer("dir").unwrap().as_deref(), Some("two"));
    assert_eq!(
        s.admin().take_pointer("dir").unwrap().as_deref(),
        Some("two")
    );
    assert_eq!(s.admin().take_pointer("dir").unwrap(), None);
    assert_eq!(s.admin().pointer("dir").unwrap(), None);
}

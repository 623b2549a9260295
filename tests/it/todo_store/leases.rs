//! Claims lapse by the lease their holder was granted (DESIGN.md §2.5):
//! not by the caller's `todo.claim.lease`, not early by a caller whose
//! clock runs fast, and a lease once granted never shrinks, whatever the
//! holder's next call says about its lease or its clock.

use goalkeeper::store::Caller;
use goalkeeper::todo::Actor::Agent;
use goalkeeper::todo::Call;
use goalkeeper::{AgentName, Store};

use super::common::*;

const MIN: i64 = 60_000;

/// One call of `name` with a lease of `lease_secs`, on its clock `at`.
fn call_as(s: &mut Store, name: &str, lease_secs: u64, at: i64, json: &str) -> (String, bool) {
    let mut caller = Caller::default();
    caller.act_as(Some(AgentName::parse(name).unwrap().unwrap()), lease_secs);
    let result = s
        .todo(&session(), Call::Json(json), Agent, &mut caller, at)
        .unwrap();
    (result.text().to_owned(), result.is_error)
}

/// The refusal of a start of `a`, held by w1, and that it changed nothing.
fn refused(s: &mut Store, name: &str, lease_secs: u64, at: i64) -> String {
    let before = (json_of(&list(s)), version(s));
    let (text, is_error) = call_as(s, name, lease_secs, at, r#"{"op":"start","task":"a"}"#);
    assert!(is_error, "{text}");
    assert_eq!((json_of(&list(s)), version(s)), before, "{text}");
    text.lines().next().unwrap().to_owned()
}

/// `w1` holds `a`, claimed at `at` with the default lease.
fn held_by_w1(at: i64) -> Store {
    let mut s = store();
    user(&mut s, r#"{"op":"init","items":["a","b"]}"#);
    let release = goalkeeper::todo::Op::Release(goalkeeper::todo::Release::Agent("main".into()));
    s.todo(
        &session(),
        Call::Op(&release),
        goalkeeper::todo::Actor::User,
        &mut Caller::default(),
        at,
    )
    .unwrap();
    let (text, is_error) = call_as(&mut s, "w1", 600, at, r#"{"op":"start","task":"a"}"#);
    assert!(!is_error, "{text}");
    s
}

/// A caller's own short lease takes nothing: `w2` with a lease of one
/// second is refused w1's task a minute after w1 claimed it, and after
/// w1's ten minutes it takes it.
#[test]
fn the_callers_short_lease_takes_no_claim() {
    let mut s = held_by_w1(NOW);
    assert_eq!(
        refused(&mut s, "w2", 1, NOW + MIN),
        "Errors: task \"a\" is held by agent \"w1\" (claimed 1 min ago; the claim lapses in 9 min unless it calls again); work on another task, or ask the user to release it"
    );
    let (text, is_error) = call_as(
        &mut s,
        "w2",
        1,
        NOW + 10 * MIN,
        r#"{"op":"start","task":"a"}"#,
    );
    assert!(!is_error, "{text}");
    assert!(text.contains("a [in_progress: w2]"), "{text}");
}

/// A lease granted never shrinks: after w1's call five minutes in (its
/// lease then ends at fifteen), neither its call with a lease of one
/// second nor its call with its clock stepped back four minutes ends it
/// sooner.
#[test]
fn a_granted_lease_never_shrinks() {
    let mut s = held_by_w1(NOW);
    for (lease, at) in [(600, NOW + 5 * MIN), (1, NOW + 6 * MIN), (600, NOW + MIN)] {
        let (text, is_error) = call_as(&mut s, "w1", lease, at, r#"{"op":"view"}"#);
        assert!(!is_error, "{text}");
    }
    assert_eq!(
        refused(&mut s, "w2", 600, NOW + 12 * MIN),
        "Errors: task \"a\" is held by agent \"w1\" (claimed 12 min ago; the claim lapses in 3 min unless it calls again); work on another task, or ask the user to release it"
    );
    let (text, is_error) = call_as(
        &mut s,
        "w2",
        600,
        NOW + 15 * MIN,
        r#"{"op":"start","task":"a"}"#,
    );
    assert!(!is_error, "{text}");
}

/// A caller whose clock runs ten minutes fast takes nothing early: a
/// claim lapses only once the database's clock (PostgreSQL's server's;
/// on SQLite this machine's) has passed its end too.
#[test]
fn a_fast_clock_takes_no_claim() {
    let real = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let mut s = held_by_w1(real);
    let first = refused(&mut s, "w2", 600, real + 11 * MIN);
    assert!(
        first.starts_with("Errors: task \"a\" is held by agent \"w1\""),
        "{first}"
    );
}

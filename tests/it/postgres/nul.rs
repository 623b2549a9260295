//! The scenarios of `crate::nul` on the PostgreSQL server of the test run,
//! which refuses a NUL in any text it is given.

use crate::common::{TestEnv, pg};

#[test]
fn a_hook_event_with_a_nul_keeps_the_rest_on_postgres() {
    let db = pg::database();
    crate::nul::a_hook_event_with_a_nul_keeps_the_rest(&TestEnv::on(&db.url()));
}

#[test]
fn a_prompt_with_a_nul_is_answered_on_postgres() {
    let db = pg::database();
    crate::nul::a_prompt_with_a_nul_is_answered(&TestEnv::on(&db.url()));
}

//! The scenarios of `crate::teams` on the PostgreSQL server of the test
//! run: several agent processes on one list through one server.

use crate::common::{TestEnv, pg};

#[test]
fn eight_agents_share_a_hundred_tasks_on_postgres() {
    let db = pg::database();
    crate::teams::eight_agents_share_a_hundred_tasks(&TestEnv::on(&db.url()));
}

#[test]
fn a_killed_holder_loses_its_task_after_the_lease_on_postgres() {
    let db = pg::database();
    crate::teams::a_killed_holder_loses_its_task_after_the_lease(&TestEnv::on(&db.url()));
}

#[test]
fn a_refusal_tells_the_time_left_by_the_clock_that_decided_on_postgres() {
    let db = pg::database();
    crate::teams::a_refusal_tells_the_time_left_by_the_clock_that_decided(&TestEnv::on(&db.url()));
}

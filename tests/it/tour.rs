//! The README's first quickstart command: the tour runs with no setup and
//! its output is reviewed as a snapshot.

use crate::common;

use common::TestEnv;

#[test]
fn the_tour_runs_a_whole_goal_session() {
    let env = TestEnv::new();
    let output = env.run(&["tour"]);
    assert!(output.ends_with("[exit status: 0]\n"), "{output}");
    // The tour uses its own temporary database, not the configured one.
    assert!(!env.db().exists());
    assert_snapshot!("tour", output);
}

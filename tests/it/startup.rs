//! Start-up short cuts keep clap's behaviour: `--version` alone is answered
//! before the command tree is built, with the same bytes clap prints when
//! it parses the flag among others.

use crate::common::TestEnv;

#[test]
fn version_alone_prints_what_clap_prints() {
    let env = TestEnv::new();
    let expected = format!("goalkeeper {}\n", env!("CARGO_PKG_VERSION"));
    // Through clap: the flag among other arguments.
    let parsed = env.ok(&["--json", "--version"]);
    assert_eq!(parsed, expected);
    for flag in ["--version", "-V"] {
        let output = env.cmd(&[flag]).output().unwrap();
        assert!(output.status.success());
        assert_eq!(
            String::from_utf8(output.stdout).unwrap(),
            expected,
            "{flag}"
        );
        assert!(output.stderr.is_empty(), "{flag}");
    }
}

//! `goalkeeper verify` (DESIGN.md §13): the checks run one after another
//! in the current directory, the fingerprint of the files taken as the run
//! starts, and the run recorded as evidence.

pub mod process;

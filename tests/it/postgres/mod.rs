//! Fleet mode against a real PostgreSQL server that the test run starts
//! itself (see `common/pg.rs`): the store's acceptance tests on the second
//! backend, connection handling and the schema discipline, real processes
//! racing, crashing, and outliving a server restart.

mod acceptance;
mod burst;
mod concurrency;
mod connection;
mod crash;
mod faults;
mod fleet;
mod migrate;
mod nul;
mod pooler;
mod schema;
mod teams;

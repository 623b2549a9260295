//! Fleet mode against a real PostgreSQL server that the test run starts
//! itself (see `common/pg.rs`): connection handling, the schema
//! discipline, the CLI on PostgreSQL.

mod acceptance;
mod connection;

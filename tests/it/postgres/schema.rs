//! The two backends' schemas, built by goalkeeper itself, are the same
//! tables with the same columns (names, order, type, nullability,
//! default), the same primary keys and the same indexes: what the shared
//! DDL and each backend's own steps create cannot drift apart unseen.

use std::collections::BTreeMap;

use crate::common::pg;

/// One column: name, type (`integer` or `text`), not null, default.
type Column = (String, String, bool, Option<String>);

/// An index: its table, unique, and its columns (`<expression>` for an
/// expression).
type Index = (String, bool, Vec<String>);

/// What the test compares of one schema.
#[derive(Debug, Default, PartialEq)]
struct Schema {
    columns: BTreeMap<String, Vec<Column>>,
    primary_keys: BTreeMap<String, Vec<String>>,
    indexes: BTreeMap<String, Index>,
}

/// The type as both backends' columns have it: SQLite's `INTEGER` is
/// PostgreSQL's `bigint`.
fn kind(declared: &str) -> String {
    match declared.to_ascii_lowercase().as_str() {
        "integer" | "bigint" => "integer".into(),
        other => other.into(),
    }
}

fn sqlite_schema(db: &std::path::Path) -> Schema {
    let conn = rusqlite::Connection::open(db).unwrap();
    let strings = |sql: &str, arg: &str| -> Vec<String> {
        let mut stmt = conn.prepare(sql).unwrap();
        stmt.query_map([arg], |r| r.get::<_, Option<String>>(0))
            .unwrap()
            .map(|r| r.unwrap().unwrap_or_else(|| "<expression>".into()))
            .collect()
    };
    let mut schema = Schema::default();
    // SQLite's own tables (`sqlite_sequence`, where `AUTOINCREMENT`
    // keeps its counters) are not goalkeeper's.
    let tables = strings(
        "SELECT name FROM sqlite_master WHERE type = ?1 ORDER BY name",
        "table",
    );
    let tables = tables.into_iter().filter(|t| !t.starts_with("sqlite_"));
    for table in tables {
        let mut stmt = conn
            .prepare(
                "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1) ORDER BY cid",
            )
            .unwrap();
        let rows: Vec<(String, String, bool, Option<String>, i64)> = stmt
            .query_map([&table], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        let mut keys: Vec<(i64, String)> = rows
            .iter()
            .filter(|c| c.4 > 0)
            .map(|c| (c.4, c.0.clone()))
            .collect();
        keys.sort();
        schema
            .primary_keys
            .insert(table.clone(), keys.into_iter().map(|(_, c)| c).collect());
        // A primary key column takes no NULL on PostgreSQL; SQLite reports
        // it nullable unless declared so. The store never writes one.
        let columns = rows
            .into_iter()
            .map(|(name, ty, not_null, default, pk)| (name, kind(&ty), not_null || pk > 0, default))
            .collect();
        schema.columns.insert(table.clone(), columns);
        let mut stmt = conn
            .prepare("SELECT name, \"unique\" FROM pragma_index_list(?1) WHERE origin = 'c'")
            .unwrap();
        let indexes: Vec<(String, bool)> = stmt
            .query_map([&table], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        for (name, unique) in indexes {
            let columns = strings(
                "SELECT name FROM pragma_index_info(?1) ORDER BY seqno",
                &name,
            );
            schema
                .indexes
                .insert(name, (table.clone(), unique, columns));
        }
    }
    schema
}

fn postgres_schema(client: &mut postgres::Client) -> Schema {
    let mut schema = Schema::default();
    let tables: Vec<String> = client
        .query(
            "SELECT table_name::text FROM information_schema.tables
             WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
               AND table_name <> 'goalkeeper_schema'
             ORDER BY table_name",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    for table in tables {
        let columns = client
            .query(
                "SELECT column_name::text, data_type::text, is_nullable = 'NO', column_default::text
                 FROM information_schema.columns
                 WHERE table_schema = 'public' AND table_name = $1
                 ORDER BY ordinal_position",
                &[&table],
            )
            .unwrap()
            .iter()
            .map(|r| {
                let default: Option<String> = r.get(3);
                // `'none'::text`: PostgreSQL keeps the literal's type.
                let default = default.map(|d| d.trim_end_matches("::text").to_owned());
                (r.get(0), kind(r.get(1)), r.get(2), default)
            })
            .collect();
        schema.columns.insert(table.clone(), columns);
        let keys = client
            .query(
                "SELECT a.attname::text FROM pg_index i
                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                 WHERE i.indrelid = ('public.' || $1)::regclass AND i.indisprimary
                 ORDER BY array_position(i.indkey::int2[], a.attnum)",
                &[&table],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        schema.primary_keys.insert(table.clone(), keys);
        let indexes = client
            .query(
                "SELECT c.relname::text, i.indisunique,
                        array(SELECT CASE WHEN k = 0 THEN '<expression>'
                                          ELSE (SELECT attname::text FROM pg_attribute
                                                WHERE attrelid = i.indrelid AND attnum = k) END
                              FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS u(k, n) ORDER BY n)
                 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                 WHERE i.indrelid = ('public.' || $1)::regclass AND NOT i.indisprimary",
                &[&table],
            )
            .unwrap();
        for row in indexes {
            schema
                .indexes
                .insert(row.get(0), (table.clone(), row.get(1), row.get(2)));
        }
    }
    schema
}

#[test]
fn both_backends_build_the_same_tables_columns_and_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("goalkeeper.db");
    goalkeeper::Store::open(&file).expect("a SQLite store opens");
    let sqlite = sqlite_schema(&file);

    let db = pg::database();
    let location = goalkeeper::store::Location::parse(&db.url()).unwrap();
    goalkeeper::Store::open(&location).expect("a PostgreSQL store opens");
    let postgres = postgres_schema(&mut db.admin());

    // Not an empty comparison: every table of the latest schema is there.
    let tables: Vec<&str> = sqlite.columns.keys().map(String::as_str).collect();
    assert_eq!(
        tables,
        [
            "agents",
            "check_runs",
            "events",
            "goals",
            "phases",
            "pointers",
            "session_marks",
            "sessions",
            "tasks",
            "todo_undo"
        ]
    );
    assert!(sqlite.indexes.contains_key("tasks_by_prefix"));
    for table in sqlite.columns.keys() {
        assert_eq!(
            sqlite.columns[table], postgres.columns[table],
            "the columns of {table}"
        );
    }
    assert_eq!(sqlite.primary_keys, postgres.primary_keys);
    assert_eq!(sqlite.indexes, postgres.indexes);
    assert_eq!(sqlite, postgres);
}

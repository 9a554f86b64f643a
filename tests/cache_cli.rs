//! `kibitz cache list` and `kibitz cache prune` through the executable, on a SQLite file and on PostgreSQL (a
//! throwaway cluster; without PostgreSQL's programs that half prints why and returns, under `KIBITZ_ORACLE=1`
//! it fails): this build's results and the external engines' stay, another kibitz build's go, and `--engine`
//! deletes exactly the engine named. The rows of the other engines lie far apart by id, so that the deletion
//! goes through many of its batches.

mod common;

use std::process::Command;

use common::TempDir;
use common::pg::Cluster;
use kibitz::store::{CacheKey, CachedAnalysis, CachedLine, CachedScore, DELETE_BATCH_IDS, ENGINE_VERSION, Store};

/// `kibitz cache ARGS --db DB`: (success, stdout, stderr).
fn cache(db: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kibitz"))
        .arg("cache")
        .args(args)
        .args(["--db", db])
        .env_remove("KIBITZ_DB")
        .output()
        .expect("run kibitz cache");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn analysis(depth: u32) -> CachedAnalysis {
    CachedAnalysis {
        depth,
        seldepth: depth,
        nodes: 1000,
        time_ms: 5,
        bestmove: Some("e2e4".into()),
        lines: vec![CachedLine { moves: vec!["e2e4".into()], score: CachedScore::Cp(20), depth }],
    }
}

/// The listing's line for `engine` and `game` (columns: results, game, kind, engine): (results, kind).
fn listed(list: &str, engine: &str, game: &str) -> Option<(u64, String)> {
    list.lines().find_map(|line| {
        let column = |range: std::ops::Range<usize>| line.get(range).map(str::trim);
        (column(12..22)? == game && line.get(46..)? == engine)
            .then(|| Some((column(0..10)?.parse().ok()?, column(24..44)?.to_string())))?
    })
}

/// Rows of another kibitz build and of an external engine (id, game, position, engine), `DELETE_BATCH_IDS` and
/// more apart.
const OTHER_ROWS: [(i64, &str, &str, &str); 4] = [
    (3 * DELETE_BATCH_IDS, "chess", "p1", "kibitz 0.0.1"),
    (7 * DELETE_BATCH_IDS + 5, "draughts", "p2", "kibitz 0.0.1"),
    (9 * DELETE_BATCH_IDS, "chess", "p3", "kibitz 0.0.1 chess network 0123456789abcdef"),
    (12 * DELETE_BATCH_IDS, "chess", "p4", "stockfish (Stockfish 15.1)"),
];

fn insert_sql((id, game, position, engine): (i64, &str, &str, &str)) -> String {
    format!(
        "INSERT INTO analysis_cache (id, game, position, multipv, engine, depth, seldepth, nodes, time_ms, bestmove, \
         lines, updated_ms) VALUES ({id}, '{game}', '{position}', 1, '{engine}', 10, 10, 100, 1, 'e2e4', '[]', 0)"
    )
}

/// The whole scenario on the store `db`, whose other engines' rows `insert` writes.
fn scenario(db: &str, insert: impl Fn(String)) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let own_chess = format!("{ENGINE_VERSION} chess network fedcba9876543210");
    let chess_key = CacheKey { engine: Some(own_chess.clone()), ..CacheKey::new("chess", "own", 1) };
    let checkers_key = CacheKey::new("checkers", "own", 1);
    runtime.block_on(async {
        let store = Store::open(db).await.expect("open");
        assert!(store.put_analysis(&chess_key, &analysis(12)).await.expect("put"));
        assert!(store.put_analysis(&checkers_key, &analysis(9)).await.expect("put"));
        store.close().await;
    });
    for row in OTHER_ROWS {
        insert(insert_sql(row));
    }

    let (ok, list, err) = cache(db, &["list"]);
    assert!(ok, "{err}");
    assert_eq!(listed(&list, &own_chess, "chess"), Some((1, "this build".into())), "{list}");
    assert_eq!(listed(&list, ENGINE_VERSION, "checkers"), Some((1, "this build".into())), "{list}");
    assert_eq!(listed(&list, "kibitz 0.0.1", "chess"), Some((1, "another kibitz build".into())), "{list}");
    assert_eq!(listed(&list, "kibitz 0.0.1", "draughts"), Some((1, "another kibitz build".into())), "{list}");
    assert_eq!(listed(&list, "stockfish (Stockfish 15.1)", "chess"), Some((1, "external".into())), "{list}");
    assert!(list.contains(&format!("this build's engine version: {ENGINE_VERSION}")), "{list}");

    // A dry run names what would go and deletes nothing.
    let (ok, out, err) = cache(db, &["prune", "--dry-run"]);
    assert!(ok, "{err}");
    assert!(out.contains("would delete 2 results of `kibitz 0.0.1`"), "{out}");
    assert!(out.contains("would delete 1 results of `kibitz 0.0.1 chess network 0123456789abcdef`"), "{out}");
    assert_eq!(cache(db, &["list"]).1, list);

    let (ok, out, err) = cache(db, &["prune"]);
    assert!(ok, "{err}");
    assert!(out.contains("deleted 2 results of `kibitz 0.0.1`"), "{out}");
    assert!(out.contains("deleted 1 results of `kibitz 0.0.1 chess network 0123456789abcdef`"), "{out}");
    assert!(!out.contains("stockfish") && !out.contains(ENGINE_VERSION), "{out}");
    let (_, after, _) = cache(db, &["list"]);
    assert!(!after.contains("kibitz 0.0.1"), "{after}");
    assert_eq!(listed(&after, "stockfish (Stockfish 15.1)", "chess"), Some((1, "external".into())), "{after}");
    let (ok, out, _) = cache(db, &["prune"]);
    assert!(ok && out.contains("nothing to delete"), "{out}");

    // `--engine` names exactly one engine of the listing; an unknown one is an error naming it.
    let (ok, _, err) = cache(db, &["prune", "--engine", "stockfish"]);
    assert!(!ok && err.contains("--engine `stockfish`") && err.contains("no results"), "{err}");
    let (ok, out, err) = cache(db, &["prune", "--engine", "stockfish (Stockfish 15.1)"]);
    assert!(ok && out.contains("deleted 1 results of `stockfish (Stockfish 15.1)`"), "{out} {err}");

    // This build's results are all still there and readable.
    let (_, last, _) = cache(db, &["list"]);
    assert_eq!(
        last.lines().filter(|l| l.contains("this build") && !l.starts_with("this build's")).count(),
        2,
        "{last}"
    );
    runtime.block_on(async {
        let store = Store::open(db).await.expect("reopen");
        assert_eq!(store.get_analysis(&chess_key).await.expect("get").map(|a| a.depth), Some(12));
        assert_eq!(store.get_analysis(&checkers_key).await.expect("get").map(|a| a.depth), Some(9));
        store.close().await;
    });
}

#[test]
fn the_cache_is_listed_and_pruned_on_sqlite() {
    let dir = TempDir::new("cache-cli");
    let db = dir.db().to_string_lossy().into_owned();
    // A store that is not there is named, not made (a mistyped path used to list a new, empty store).
    let (ok, out, err) = cache(&db, &["list"]);
    assert!(!ok && err.contains("no such file") && err.contains(&db), "{out} {err}");
    assert!(!dir.db().exists());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async { Store::open(&db).await.expect("a new store").close().await });
    let (ok, out, err) = cache(&db, &["list"]);
    assert!(ok && out.contains("the cache is empty"), "{out} {err}");
    scenario(&db, |sql| {
        runtime.block_on(async {
            use sqlx::Connection;
            let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&db);
            let mut connection = sqlx::SqliteConnection::connect_with(&options).await.expect("connect");
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&mut connection).await.expect("insert");
            connection.close().await.expect("close");
        })
    });
}

#[test]
fn the_cache_is_listed_and_pruned_on_postgresql() {
    let Some(cluster) = Cluster::start() else { return };
    let db = cluster.database();
    // The table's ids are its own (`GENERATED ALWAYS`): a test row names one with `OVERRIDING SYSTEM VALUE`.
    scenario(&db, |sql| {
        cluster.psql(&db, &sql.replace(") VALUES (", ") OVERRIDING SYSTEM VALUE VALUES ("));
    });
}

//! The analysis cache on real SQLite files in a temporary directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kibitz::store::{
    CacheEngineRows, CacheKey, CachedAnalysis, CachedLine, CachedScore, Store, StoreConfig, StoreError,
};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, Row, SqliteConnection};

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "kibitz-store-{name}-{}-{nanos}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    fn db(&self) -> String {
        self.0.join("cache.db").to_string_lossy().into_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn key(game: &str, position: &str, multipv: u32) -> CacheKey {
    CacheKey::new(game, position, multipv)
}

fn analysis(depth: u32) -> CachedAnalysis {
    CachedAnalysis {
        depth,
        seldepth: depth + 3,
        nodes: 10_000 * u64::from(depth),
        time_ms: 40,
        bestmove: Some(format!("m{depth}")),
        lines: vec![
            CachedLine { moves: vec![format!("m{depth}"), "x".into(), "y".into()], score: CachedScore::Cp(25), depth },
            CachedLine { moves: vec!["z".into()], score: CachedScore::Mate(-5), depth },
        ],
    }
}

fn config(engine: &str, memory_entries: usize) -> StoreConfig {
    StoreConfig { engine: engine.into(), memory_entries }
}

async fn raw_connection(path: &str) -> SqliteConnection {
    SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(path)).await.expect("raw connection")
}

#[tokio::test]
async fn open_creates_and_migrates_idempotently() {
    let dir = TempDir::new("create");
    let db = dir.db();
    assert!(!Path::new(&db).exists());
    let store = Store::open(&db).await.expect("open");
    assert!(Path::new(&db).exists());
    assert_eq!(store.location(), db);
    assert_eq!(store.engine(), kibitz::store::ENGINE_VERSION);
    let digest =
        store.engine().strip_prefix(concat!("kibitz ", env!("CARGO_PKG_VERSION"), "+")).expect("version+digest");
    assert!(digest.len() == 16 && digest.bytes().all(|b| b.is_ascii_hexdigit()), "{digest}");
    store.close().await;
    // Opening again runs no migration twice.
    Store::open(&db).await.expect("reopen").close().await;

    let mut raw = raw_connection(&db).await;
    let mode: String = sqlx::query("PRAGMA journal_mode").fetch_one(&mut raw).await.expect("pragma").get(0);
    assert_eq!(mode, "wal");
    let versions: Vec<i64> = sqlx::query("SELECT version FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&mut raw)
        .await
        .expect("migrations table")
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(versions, vec![1, 2, 3]);
    let indexes: i64 =
        sqlx::query("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'analysis_cache_key'")
            .fetch_one(&mut raw)
            .await
            .expect("index")
            .get(0);
    assert_eq!(indexes, 1);
    raw.close().await.expect("close raw");
}

#[tokio::test]
async fn url_targets_work() {
    let dir = TempDir::new("url");
    let db = dir.db();
    let store = Store::open(&format!("sqlite://{db}")).await.expect("open by URL");
    store.put_analysis(&key("g", "p", 1), &analysis(3)).await.expect("put");
    store.close().await;
    let store = Store::open(&db).await.expect("open by path");
    assert_eq!(store.get_analysis(&key("g", "p", 1)).await.expect("get"), Some(analysis(3)));
    store.close().await;
}

#[tokio::test]
async fn data_survives_a_restart() {
    let dir = TempDir::new("persist");
    let db = dir.db();
    let store = Store::open(&db).await.expect("open");
    for i in 0..20 {
        assert!(store.put_analysis(&key("g", &format!("p{i}"), 1), &analysis(i + 1)).await.expect("put"));
    }
    store.close().await;
    let store = Store::open(&db).await.expect("reopen");
    for i in 0..20 {
        assert_eq!(store.get_analysis(&key("g", &format!("p{i}"), 1)).await.expect("get"), Some(analysis(i + 1)));
    }
    let stats = store.stats();
    assert_eq!((stats.hits, stats.memory_hits, stats.misses, stats.writes), (20, 0, 0, 0));
    store.close().await;
}

#[tokio::test]
async fn deeper_replaces_shallower_and_not_the_reverse() {
    let dir = TempDir::new("depth");
    let db = dir.db();
    let store = Store::open(&db).await.expect("open");
    let k = key("g", "p", 1);
    assert!(store.put_analysis(&k, &analysis(12)).await.expect("put"));
    assert!(!store.put_analysis(&k, &analysis(7)).await.expect("put shallower"));
    assert!(!store.put_analysis(&k, &analysis(12)).await.expect("put equal"));
    assert_eq!(store.get_analysis(&k).await.expect("get").map(|a| a.depth), Some(12));
    assert!(store.put_analysis(&k, &analysis(15)).await.expect("put deeper"));
    store.close().await;
    // What the database holds, not only what memory says.
    let store = Store::open(&db).await.expect("reopen");
    assert_eq!(store.get_analysis(&k).await.expect("get"), Some(analysis(15)));
    store.close().await;
}

#[tokio::test]
async fn game_position_and_multipv_are_distinct_keys() {
    let dir = TempDir::new("keys");
    let store = Store::builder(dir.db()).memory_entries(0).open().await.expect("open");
    let keys = [key("g1", "p", 1), key("g2", "p", 1), key("g1", "q", 1), key("g1", "p", 3)];
    for (i, k) in keys.iter().enumerate() {
        assert!(store.put_analysis(k, &analysis(i as u32 + 1)).await.expect("put"));
    }
    for (i, k) in keys.iter().enumerate() {
        assert_eq!(store.get_analysis(k).await.expect("get").map(|a| a.depth), Some(i as u32 + 1));
    }
    assert_eq!(store.get_analysis(&key("g1", "p", 2)).await.expect("get"), None);
    assert_eq!(store.get_analysis(&key("g3", "p", 1)).await.expect("get"), None);
    store.close().await;
}

#[tokio::test]
async fn another_engine_version_does_not_see_the_rows() {
    let dir = TempDir::new("engine");
    let db = dir.db();
    let k = key("g", "p", 1);
    let old = Store::open_with(&db, config("kibitz 0.0.1", 64)).await.expect("open old");
    assert!(old.put_analysis(&k, &analysis(20)).await.expect("put"));
    old.close().await;

    let new = Store::builder(&db).engine("kibitz 0.0.2").open().await.expect("open new");
    assert_eq!(new.engine(), "kibitz 0.0.2");
    assert_eq!(new.get_analysis(&k).await.expect("get"), None);
    // Its own shallower result is stored beside the old one, not refused because of it.
    assert!(new.put_analysis(&k, &analysis(5)).await.expect("put"));
    assert_eq!(new.get_analysis(&k).await.expect("get").map(|a| a.depth), Some(5));
    new.close().await;

    let old = Store::open_with(&db, config("kibitz 0.0.1", 64)).await.expect("reopen old");
    assert_eq!(old.get_analysis(&k).await.expect("get").map(|a| a.depth), Some(20));
    old.close().await;
}

#[tokio::test]
async fn memory_front_stays_bounded_and_evicted_entries_come_from_sqlite() {
    let dir = TempDir::new("bounded");
    let store = Store::builder(dir.db()).memory_entries(8).open().await.expect("open");
    for i in 0..100 {
        store.put_analysis(&key("g", &format!("p{i}"), 1), &analysis(i + 1)).await.expect("put");
        assert!(store.memory_len() <= 8);
    }
    for round in 0..2 {
        for i in 0..100 {
            let found = store.get_analysis(&key("g", &format!("p{i}"), 1)).await.expect("get");
            assert_eq!(found.map(|a| a.depth), Some(i + 1), "round {round} p{i}");
            assert!(store.memory_len() <= 8);
        }
    }
    let stats = store.stats();
    assert_eq!(stats.hits, 200);
    // A cyclic scan over 100 keys through 8 slots is mostly served by SQLite.
    assert!(stats.memory_hits < 100, "{stats:?}");
    // A hot key stays in memory while others stream through.
    let hot = key("g", "p0", 1);
    let before = store.stats().memory_hits;
    for i in 0..50 {
        store.get_analysis(&hot).await.expect("hot");
        store.get_analysis(&key("g", &format!("p{}", 50 + i), 1)).await.expect("cold");
    }
    assert!(store.stats().memory_hits - before >= 45, "{:?}", store.stats());
    store.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_puts_keep_the_deepest() {
    let dir = TempDir::new("concurrent");
    let db = dir.db();
    let store = Store::open(&db).await.expect("open");
    let keys: Vec<CacheKey> = (0..4).map(|i| key("g", &format!("p{i}"), 1)).collect();
    let mut tasks = Vec::new();
    for t in 0..64u32 {
        let store = store.clone();
        let keys = keys.clone();
        tasks.push(tokio::spawn(async move {
            // Depths arrive in a scrambled order: 1..=64, each once per key.
            let depth = (t * 37) % 64 + 1;
            let mut wins = 0;
            for k in &keys {
                if store.put_analysis(k, &analysis(depth)).await.expect("put") {
                    wins += 1;
                }
            }
            wins
        }));
    }
    let mut writes = 0;
    for task in tasks {
        writes += task.await.expect("task");
    }
    assert_eq!(store.stats().writes, writes);
    for k in &keys {
        assert_eq!(store.get_analysis(k).await.expect("get").map(|a| a.depth), Some(64));
    }
    store.close().await;
    let store = Store::builder(&db).memory_entries(0).open().await.expect("reopen");
    for k in &keys {
        assert_eq!(store.get_analysis(k).await.expect("get"), Some(analysis(64)));
    }
    store.close().await;
}

#[tokio::test]
async fn a_corrupt_row_is_an_error_for_its_lookup_only() {
    let dir = TempDir::new("corrupt");
    let db = dir.db();
    let store = Store::open(&db).await.expect("open");
    for position in ["bad", "good1", "good2"] {
        store.put_analysis(&key("g", position, 1), &analysis(9)).await.expect("put");
    }
    store.close().await;

    let mut raw = raw_connection(&db).await;
    sqlx::query("UPDATE analysis_cache SET lines = 'this is not json' WHERE position = 'bad'")
        .execute(&mut raw)
        .await
        .expect("corrupt");
    raw.close().await.expect("close raw");

    let store = Store::open(&db).await.expect("reopen");
    match store.get_analysis(&key("g", "bad", 1)).await {
        Err(error @ StoreError::Corrupt { .. }) => {
            let message = error.to_string();
            assert!(message.contains("lines"), "{message}");
            assert!(!message.contains("bad"), "positions are not put in messages: {message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    for position in ["good1", "good2"] {
        assert_eq!(store.get_analysis(&key("g", position, 1)).await.expect("get"), Some(analysis(9)));
    }
    // Treated as a miss: the next result for that key is stored and served.
    assert_eq!(store.get_analysis(&key("g", "bad", 1)).await.expect("get"), None);
    assert!(store.put_analysis(&key("g", "bad", 1), &analysis(4)).await.expect("put"));
    assert_eq!(store.get_analysis(&key("g", "bad", 1)).await.expect("get"), Some(analysis(4)));
    assert_eq!(store.stats().misses, 2);
    store.close().await;
}

#[tokio::test]
async fn a_file_that_is_not_sqlite_is_a_clear_error() {
    let dir = TempDir::new("notdb");
    let db = dir.db();
    let content = "hello, this is a text file and certainly not a database\n".repeat(200);
    std::fs::write(&db, &content).expect("write");
    match Store::open(&db).await {
        Err(error @ StoreError::Open { .. }) => {
            let message = error.to_string();
            assert!(message.contains(&db), "{message}");
            assert!(message.contains("not a database"), "{message}");
        }
        other => panic!("expected an Open error, got {other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&db).ok().as_deref(), Some(content.as_str()), "the file is untouched");
}

#[tokio::test]
async fn a_missing_directory_is_a_clear_error() {
    let dir = TempDir::new("nodir");
    let missing = dir.0.join("no").join("such");
    let db = missing.join("cache.db").to_string_lossy().into_owned();
    let error = Store::open(&db).await.expect_err("must fail");
    let message = error.to_string();
    assert!(matches!(error, StoreError::Open { .. }), "{message}");
    assert!(message.contains(&*missing.to_string_lossy()), "{message}");
    assert!(!missing.exists());
}

#[tokio::test]
async fn a_database_from_a_newer_kibitz_is_refused() {
    let dir = TempDir::new("newer");
    let db = dir.db();
    Store::open(&db).await.expect("open").close().await;
    let mut raw = raw_connection(&db).await;
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (9999, 'from the future', 1, X'00', 0)",
    )
    .execute(&mut raw)
    .await
    .expect("insert");
    raw.close().await.expect("close raw");
    match Store::open(&db).await {
        Err(error @ StoreError::NewerSchema { version: 9999, .. }) => {
            assert!(error.to_string().contains("newer kibitz"), "{error}");
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_then_use_is_an_error_and_close_does_not_hang() {
    let dir = TempDir::new("close");
    let store = Store::builder(dir.db()).memory_entries(0).open().await.expect("open");
    let k = key("g", "p", 1);
    store.put_analysis(&k, &analysis(3)).await.expect("put");
    // Readers and writers busy while the store closes: each ends with a result or `Closed`, none hangs.
    let mut tasks = Vec::new();
    for t in 0..8u32 {
        let store = store.clone();
        let k = k.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..200u32 {
                let result = if i % 4 == 0 {
                    store.put_analysis(&k, &analysis(t * 1000 + i)).await.map(|_| ())
                } else {
                    store.get_analysis(&k).await.map(|_| ())
                };
                match result {
                    Ok(()) => {}
                    Err(StoreError::Closed) => return,
                    Err(error) => panic!("unexpected {error}"),
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(5)).await;
    tokio::time::timeout(Duration::from_secs(10), store.close()).await.expect("close finishes");
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(10), task).await.expect("task finishes").expect("no panic");
    }
    assert!(matches!(store.get_analysis(&k).await, Err(StoreError::Closed)));
    assert!(matches!(store.put_analysis(&k, &analysis(99)).await, Err(StoreError::Closed)));
}

/// Printed, not asserted: how many lookups per second the memory front and SQLite answer on this machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throughput_is_printed() {
    let dir = TempDir::new("throughput");
    let db = dir.db();
    let positions = 1000;
    let keys: Vec<CacheKey> =
        (0..positions).map(|i| key("somegame", &format!("{}:{i}", "W:W21-32:B1-12".repeat(4)), 1)).collect();
    {
        let store = Store::open(&db).await.expect("open");
        for (i, k) in keys.iter().enumerate() {
            store.put_analysis(k, &analysis(10 + (i as u32 % 10))).await.expect("put");
        }
        store.close().await;
    }
    for (label, memory_entries, lookups_per_task) in [("memory", positions, 100_000), ("sqlite", 0, 5_000)] {
        let store = Store::builder(&db).memory_entries(memory_entries).open().await.expect("open");
        // Warm the memory front (when there is one).
        for k in &keys {
            store.get_analysis(k).await.expect("warm");
        }
        let tasks = 4;
        let start = Instant::now();
        let mut handles = Vec::new();
        for t in 0..tasks {
            let store = store.clone();
            let keys = keys.clone();
            handles.push(tokio::spawn(async move {
                for i in 0..lookups_per_task {
                    let k = &keys[(i * 7 + t * 13) % keys.len()];
                    assert!(store.get_analysis(k).await.expect("get").is_some());
                }
            }));
        }
        for handle in handles {
            handle.await.expect("task");
        }
        let elapsed = start.elapsed();
        let total = (tasks * lookups_per_task) as f64;
        println!(
            "store throughput: {label} hits: {total} lookups in {:.3} s = {:.0} lookups/s ({} tasks, 2 worker threads)",
            elapsed.as_secs_f64(),
            total / elapsed.as_secs_f64(),
            tasks
        );
        store.close().await;
    }
}

#[tokio::test]
async fn deleting_an_engines_results_leaves_the_others_and_empties_the_memory_front() {
    let dir = TempDir::new("delete");
    let db = dir.db();
    let old = Store::open_with(&db, config("kibitz 0.0.1", 64)).await.expect("open old");
    assert!(old.put_analysis(&key("g", "p", 1), &analysis(20)).await.expect("put"));
    assert!(old.put_analysis(&key("h", "p", 1), &analysis(20)).await.expect("put"));
    let new = Store::open_with(&db, config("kibitz 0.0.2", 64)).await.expect("open new");
    assert!(new.put_analysis(&key("g", "p", 1), &analysis(7)).await.expect("put"));
    let rows = |engine: &str, game: &str, rows| CacheEngineRows { engine: engine.into(), game: game.into(), rows };
    assert_eq!(
        old.cache_engines().await.expect("list"),
        [rows("kibitz 0.0.1", "g", 1), rows("kibitz 0.0.1", "h", 1), rows("kibitz 0.0.2", "g", 1)]
    );
    // The old store's own results were in its memory front: deleting them there empties it too.
    assert_eq!(old.delete_cache_engine("kibitz 0.0.1").await.expect("delete"), 2);
    assert_eq!(old.get_analysis(&key("g", "p", 1)).await.expect("get"), None);
    assert_eq!(old.delete_cache_engine("kibitz 0.0.1").await.expect("delete again"), 0);
    assert_eq!(old.cache_engines().await.expect("list"), [rows("kibitz 0.0.2", "g", 1)]);
    assert_eq!(new.get_analysis(&key("g", "p", 1)).await.expect("get").map(|a| a.depth), Some(7));
    old.close().await;
    new.close().await;
}

use super::*;

fn key(position: &str, multipv: u32) -> CacheKey {
    CacheKey::new("somegame", position, multipv)
}

fn analysis(depth: u32) -> CachedAnalysis {
    CachedAnalysis {
        depth,
        seldepth: depth + 4,
        nodes: 1000 * u64::from(depth),
        time_ms: 10,
        bestmove: Some(format!("m{depth}")),
        lines: vec![CachedLine { moves: vec![format!("m{depth}"), "r".into()], score: CachedScore::Cp(12), depth }],
    }
}

// Every case below runs on both backends: on SQLite (in memory, or a file where the case reopens the store)
// as one test each, and on PostgreSQL in `every_case_on_postgres`, each on a fresh database of one throwaway
// cluster (which needs PostgreSQL's programs; see tests/common/pg.rs).
#[path = "../../tests/common/pg.rs"]
mod pg;

/// Where a case keeps its data.
enum Ctx {
    Sqlite { dir: std::path::PathBuf },
    Postgres { url: String },
}

impl Ctx {
    fn sqlite(name: &str) -> Ctx {
        let dir = std::env::temp_dir().join(format!("kibitz-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Ctx::Sqlite { dir }
    }

    /// A target that outlives its stores (reopening sees the same data).
    fn durable_target(&self) -> String {
        match self {
            Ctx::Sqlite { dir } => dir.join("store.db").display().to_string(),
            Ctx::Postgres { url } => url.clone(),
        }
    }

    /// A store with a memory front of `entries` (SQLite: in memory).
    async fn store(&self, entries: usize) -> Store {
        let target = match self {
            Ctx::Sqlite { .. } => "sqlite::memory:".to_string(),
            Ctx::Postgres { url } => url.clone(),
        };
        Store::builder(target).memory_entries(entries).open().await.expect("store opens")
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        if let Ctx::Sqlite { dir } = self {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// One `#[tokio::test]` per case on SQLite, and the list of cases for PostgreSQL.
macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(&super::Ctx::sqlite(stringify!($name))).await
                }
            )*
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn every_case_on_postgres() {
            let Some(cluster) = tokio::task::spawn_blocking(pg::Cluster::start).await.expect("cluster task") else {
                return;
            };
            $(
                let url = cluster.database();
                eprintln!("postgres case {}", stringify!($name));
                $name(&Ctx::Postgres { url }).await;
            )*
            tokio::task::spawn_blocking(move || drop(cluster)).await.expect("cluster stops");
        }
    };
}

cases!(
    in_memory_store_round_trip_and_stats,
    depth_rules,
    reads_without_memory_front_come_from_the_database,
    stale_memory_entry_is_dropped_when_the_database_is_deeper,
    corrupt_row_is_reported_then_removed,
    out_of_range_column_is_corrupt_not_a_panic,
    closed_store_refuses_everything,
    annotation_jobs_are_durable_and_each_position_is_written_once,
    job_leases,
    jobs_are_listed_by_key_and_removed_with_their_results,
    keys_are_kept_by_digest_revoked_by_name_and_quotas_never_overdrawn,
);

#[test]
fn scores_convert_both_ways() {
    for score in [Score::Cp(-250), Score::Cp(0), Score::Mate(7), Score::Mate(-4)] {
        assert_eq!(Score::from(CachedScore::from(score)), score);
    }
    assert_eq!(serde_json::to_string(&CachedScore::Cp(5)).ok().as_deref(), Some(r#"{"cp":5}"#));
    assert_eq!(serde_json::to_string(&CachedScore::Mate(-3)).ok().as_deref(), Some(r#"{"mate":-3}"#));
    assert_eq!(serde_json::from_str::<CachedScore>(r#"{"mate":9}"#).ok(), Some(CachedScore::Mate(9)));
}

async fn in_memory_store_round_trip_and_stats(ctx: &Ctx) {
    let store = ctx.store(16).await;
    let k = key("p1", 1);
    assert_eq!(store.get_analysis(&k).await.ok(), Some(None));
    assert_eq!(store.put_analysis(&k, &analysis(8)).await.ok(), Some(true));
    // Served from memory (filled by the write).
    assert_eq!(store.get_analysis(&k).await.ok(), Some(Some(analysis(8))));
    assert_eq!(store.stats(), StoreStats { hits: 1, misses: 1, memory_hits: 1, writes: 1 });
    store.close().await;
}

async fn depth_rules(ctx: &Ctx) {
    let store = ctx.store(16).await;
    let k = key("p", 2);
    assert_eq!(store.put_analysis(&k, &analysis(10)).await.ok(), Some(true));
    assert_eq!(store.put_analysis(&k, &analysis(9)).await.ok(), Some(false));
    let mut same_depth = analysis(10);
    same_depth.bestmove = Some("other".into());
    assert_eq!(store.put_analysis(&k, &same_depth).await.ok(), Some(false));
    assert_eq!(store.get_analysis(&k).await.ok(), Some(Some(analysis(10))));
    assert_eq!(store.put_analysis(&k, &analysis(11)).await.ok(), Some(true));
    assert_eq!(store.get_analysis(&k).await.ok(), Some(Some(analysis(11))));
    assert_eq!(store.stats().writes, 2);
    // A refresh replaces a result as deep as its own (in the database and the memory front), never a deeper one.
    let mut refreshed = analysis(11);
    refreshed.bestmove = Some("refreshed".into());
    assert_eq!(store.refresh_analysis(&k, &refreshed).await.ok(), Some(true));
    assert_eq!(store.get_analysis(&k).await.ok(), Some(Some(refreshed.clone())));
    assert_eq!(store.refresh_analysis(&k, &analysis(10)).await.ok(), Some(false));
    assert_eq!(store.get_analysis(&k).await.ok(), Some(Some(refreshed.clone())));
    store.close().await;
    let store = ctx.store(0).await;
    if matches!(ctx, Ctx::Postgres { .. }) {
        assert_eq!(store.get_analysis(&k).await.ok(), Some(Some(refreshed)), "the database holds the refresh");
    }
    store.close().await;
}

async fn reads_without_memory_front_come_from_the_database(ctx: &Ctx) {
    let store = ctx.store(0).await;
    let k = key("p", 1);
    store.put_analysis(&k, &analysis(5)).await.expect("put");
    assert_eq!(store.get_analysis(&k).await.ok(), Some(Some(analysis(5))));
    assert_eq!(store.memory_len(), 0);
    assert_eq!(store.stats().memory_hits, 0);
    assert_eq!(store.stats().hits, 1);
    store.close().await;
}

async fn stale_memory_entry_is_dropped_when_the_database_is_deeper(ctx: &Ctx) {
    let store = ctx.store(16).await;
    let k = key("p", 1);
    store.put_analysis(&k, &analysis(5)).await.expect("put");
    // Another writer (a second server sharing the database) stores a deeper result behind our back.
    let other = analysis(20);
    let encoded = codec::encode(&other).expect("encodes");
    assert!(!encoded.lines.contains('\''));
    store
        .raw_execute(format!("UPDATE analysis_cache SET depth = {}, lines = '{}'", encoded.depth, encoded.lines))
        .await
        .expect("update");
    // Memory still answers with depth 5 until a put learns the database is deeper.
    assert_eq!(store.get_analysis(&k).await.ok().flatten().map(|a| a.depth), Some(5));
    assert_eq!(store.put_analysis(&k, &analysis(12)).await.ok(), Some(false));
    assert_eq!(store.get_analysis(&k).await.ok().flatten().map(|a| a.depth), Some(20));
    store.close().await;
}

async fn corrupt_row_is_reported_then_removed(ctx: &Ctx) {
    let store = ctx.store(0).await;
    let (bad, good) = (key("bad", 1), key("good", 1));
    store.put_analysis(&bad, &analysis(30)).await.expect("put");
    store.put_analysis(&good, &analysis(4)).await.expect("put");
    store
        .raw_execute("UPDATE analysis_cache SET lines = '[{\"moves\": 3' WHERE position = 'bad'".into())
        .await
        .expect("corrupt it");
    match store.get_analysis(&bad).await {
        Err(StoreError::Corrupt { what }) => assert!(what.contains("lines"), "{what}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert_eq!(store.get_analysis(&good).await.ok(), Some(Some(analysis(4))));
    // The bad row is gone, so a shallower fresh result can take its place.
    assert_eq!(store.get_analysis(&bad).await.ok(), Some(None));
    assert_eq!(store.put_analysis(&bad, &analysis(6)).await.ok(), Some(true));
    assert_eq!(store.get_analysis(&bad).await.ok(), Some(Some(analysis(6))));
    store.close().await;
}

async fn out_of_range_column_is_corrupt_not_a_panic(ctx: &Ctx) {
    let store = ctx.store(0).await;
    let k = key("p", 1);
    store.put_analysis(&k, &analysis(3)).await.expect("put");
    // A depth past u32 (the CHECK constraints only keep numbers non-negative).
    store.raw_execute("UPDATE analysis_cache SET depth = 99999999999".into()).await.expect("corrupt it");
    assert!(matches!(store.get_analysis(&k).await, Err(StoreError::Corrupt { .. })));
    store.close().await;
}

#[tokio::test]
async fn wrongly_typed_column_is_corrupt_not_a_panic() {
    let store = Ctx::sqlite("typed").store(0).await;
    let k = key("p", 1);
    store.put_analysis(&k, &analysis(3)).await.expect("put");
    // SQLite's type affinity lets a text that is not a number into an integer column.
    store.raw_execute("UPDATE analysis_cache SET nodes = 'many'".into()).await.expect("corrupt it");
    assert!(matches!(store.get_analysis(&k).await, Err(StoreError::Corrupt { .. })));
    store.close().await;
}

async fn closed_store_refuses_everything(ctx: &Ctx) {
    let store = ctx.store(4).await;
    let k = key("p", 1);
    store.put_analysis(&k, &analysis(3)).await.expect("put");
    let clone = store.clone();
    store.close().await;
    store.close().await;
    assert!(clone.is_closed());
    assert!(matches!(clone.get_analysis(&k).await, Err(StoreError::Closed)));
    assert!(matches!(store.put_analysis(&k, &analysis(9)).await, Err(StoreError::Closed)));
    assert_eq!(store.memory_len(), 0);
}

#[tokio::test]
async fn missing_directory_is_named() {
    let dir = std::env::temp_dir().join(format!("kibitz-store-missing-{}", std::process::id()));
    let path = dir.join("x.db");
    let target = path.to_string_lossy().into_owned();
    match Store::open(&target).await {
        Err(error @ StoreError::Open { .. }) => {
            let message = error.to_string();
            assert!(message.contains(&dir.to_string_lossy().into_owned()), "{message}");
            assert!(message.contains("does not exist"), "{message}");
        }
        other => panic!("expected an Open error, got {other:?}"),
    }
    assert!(!dir.exists());
}

#[tokio::test]
async fn a_database_file_with_two_names_is_refused_and_a_symbolic_link_is_not() {
    let ctx = Ctx::sqlite("two-names");
    let Ctx::Sqlite { dir } = &ctx else { unreachable!() };
    let first = dir.join("first.db");
    let store = Store::open(&first.display().to_string()).await.expect("opens");
    store.close().await;
    let symbolic = dir.join("symbolic.db");
    std::os::unix::fs::symlink(&first, &symbolic).expect("symlink");
    let store = Store::open(&symbolic.display().to_string()).await.expect("a symbolic link opens");
    store.close().await;
    let second = dir.join("second.db");
    std::fs::hard_link(&first, &second).expect("hard link");
    for name in [&first, &second, &symbolic] {
        match Store::open(&name.display().to_string()).await {
            Err(error @ StoreError::Open { .. }) => {
                let message = error.to_string();
                assert!(message.contains("2 names (hard links)"), "{message}");
                assert!(message.contains(&name.display().to_string()), "{message}");
            }
            other => panic!("{}: expected an Open error, got {other:?}", name.display()),
        }
    }
    std::fs::remove_file(&second).expect("unlink");
    Store::open(&first.display().to_string()).await.expect("one name again: opens").close().await;
}

#[tokio::test]
async fn an_empty_target_is_refused() {
    // SQLite would open a private temporary database for each connection, and keep nothing.
    for target in ["", "sqlite:", "sqlite://"] {
        match Store::open(target).await {
            Err(error @ StoreError::Open { .. }) => assert!(error.to_string().contains("no file named"), "{error}"),
            other => panic!("`{target}`: expected an Open error, got {other:?}"),
        }
    }
}

async fn annotation_jobs_are_durable_and_each_position_is_written_once(ctx: &Ctx) {
    let target = ctx.durable_target();
    let store = Store::open(&target).await.expect("opens");
    let job = NewJob {
        id: "job1".into(),
        game: "somegame".into(),
        settings: r#"{"depth":3}"#.into(),
        games: vec![
            NewJobGame { record: Some("{\"moves\":[]}".into()), error: None, positions: 2 },
            NewJobGame { record: None, error: Some("bad".into()), positions: 0 },
        ],
        owner: Some("alice".into()),
    };
    store.create_job(&job).await.expect("created");
    // The id is the key: a second job with it is refused and leaves the first intact.
    assert!(store.create_job(&job).await.is_err());
    assert_eq!(store.put_job_position("job1", 0, 1, "r1").await.ok(), Some(true));
    assert_eq!(store.put_job_position("job1", 0, 1, "other").await.ok(), Some(false));
    // A position of a game the job does not have is refused by the foreign key.
    assert!(store.put_job_position("job1", 7, 0, "r").await.is_err());
    assert_eq!(store.set_job_status("job1", &[JobStatus::Queued], JobStatus::Running, None).await.ok(), Some(true));
    assert_eq!(store.jobs_with_status(&[JobStatus::Queued, JobStatus::Running]).await.ok(), Some(vec!["job1".into()]));
    store.close().await;

    let store = Store::open(&target).await.expect("reopens");
    let row = store.job("job1").await.expect("reads").expect("exists");
    assert_eq!(
        (row.status, row.game.as_str(), row.settings.as_str()),
        (JobStatus::Running, "somegame", r#"{"depth":3}"#)
    );
    assert_eq!(row.owner.as_deref(), Some("alice"));
    let games = store.job_games("job1").await.expect("games");
    assert_eq!(games.len(), 2);
    assert_eq!((games[1].idx, games[1].error.as_deref(), games[1].positions), (1, Some("bad"), 0));
    let positions = store.job_positions("job1").await.expect("positions");
    assert_eq!(positions, vec![PositionRow { game_idx: 0, ply: 1, result: "r1".into() }]);
    assert_eq!(store.job_position_count("job1").await.ok(), Some(1));
    assert_eq!(store.job_position_count("nope").await.ok(), Some(0));
    // A cancelled job is never marked done by a runner finishing late.
    assert_eq!(store.set_job_status("job1", &[JobStatus::Running], JobStatus::Cancelled, None).await.ok(), Some(true));
    assert_eq!(store.set_job_status("job1", &[JobStatus::Running], JobStatus::Done, None).await.ok(), Some(false));
    assert_eq!(store.job("nope").await.ok(), Some(None));
    store.close().await;
}

fn small_job(id: &str) -> NewJob {
    NewJob {
        id: id.into(),
        game: "somegame".into(),
        settings: "{}".into(),
        games: vec![NewJobGame { record: Some("{}".into()), error: None, positions: 1 }],
        owner: None,
    }
}

/// Two servers share the queue: a job is claimed by one at a time, its holder renews and releases it, a
/// lease that runs out lets the other take it, and finished jobs are never claimed. On SQLite the one server
/// holds every job.
async fn job_leases(ctx: &Ctx) {
    let store = ctx.store(0).await;
    let lease = Duration::from_secs(60);
    store.create_job(&small_job("a")).await.expect("a");
    if !store.is_shared() {
        assert_eq!(store.claim_job("n1", lease, &[]).await.ok(), Some(None));
        assert_eq!(store.renew_job("a", "n1", lease).await.ok(), Some(Some(JobStatus::Queued)));
        assert_eq!(store.release_job("a", "n1", None).await.ok(), Some(false));
        store.close().await;
        return;
    }
    let other = ctx.store(0).await;
    store.create_job_claimed(&small_job("b"), "n1", lease).await.expect("b");
    // `a` is free, `b` is held by n1.
    assert_eq!(other.claim_job("n2", lease, &[]).await.ok(), Some(Some("a".to_string())));
    assert_eq!(store.claim_job("n1", lease, &[]).await.ok(), Some(None));
    assert_eq!(store.renew_job("b", "n1", lease).await.ok(), Some(Some(JobStatus::Queued)));
    assert_eq!(store.renew_job("b", "n2", lease).await.ok(), Some(None), "only the holder renews");
    // A lease run out: n2 takes `b`, and n1 learns at its next renewal that it lost it.
    assert_eq!(store.renew_job("b", "n1", Duration::from_millis(1)).await.ok(), Some(Some(JobStatus::Queued)));
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(other.claim_job("n2", lease, &[]).await.ok(), Some(Some("b".to_string())));
    assert_eq!(store.renew_job("b", "n1", lease).await.ok(), Some(None));
    // Released: claimable at once. Cancelled: the holder sees it at renewal, and nobody claims it again.
    let waiting = |id: &'static str| {
        let store = store.clone();
        async move { store.job(id).await.expect("read").expect("the job").waiting }
    };
    assert_eq!(other.release_job("a", "n2", Some("n2 lacks its engine")).await.ok(), Some(true));
    assert_eq!(waiting("a").await.as_deref(), Some("n2 lacks its engine"));
    assert_eq!(other.release_job("a", "n2", None).await.ok(), Some(false));
    assert_eq!(waiting("a").await.as_deref(), Some("n2 lacks its engine"), "only the holder's release writes");
    // A server that cannot run `a` (it lacks its engine) passes it over.
    assert_eq!(store.claim_job("n1", lease, &["a".to_string()]).await.ok(), Some(None));
    assert_eq!(store.set_job_status("b", &[JobStatus::Queued], JobStatus::Cancelled, None).await.ok(), Some(true));
    assert_eq!(other.renew_job("b", "n2", lease).await.ok(), Some(Some(JobStatus::Cancelled)));
    assert_eq!(store.claim_job("n1", lease, &[]).await.ok(), Some(Some("a".to_string())));
    assert_eq!(waiting("a").await, None, "a claim clears why the job waited");
    assert_eq!(store.claim_job("n1", lease, &[]).await.ok(), Some(None));
    // Many claimers at once never share a job.
    for i in 0..6 {
        store.create_job(&small_job(&format!("c{i}"))).await.expect("c");
    }
    let mut claims = Vec::new();
    for n in 0..4 {
        let s = if n % 2 == 0 { store.clone() } else { other.clone() };
        claims.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(id) = s.claim_job(&format!("m{n}"), lease, &[]).await.expect("claim") {
                got.push(id);
            }
            got
        }));
    }
    let mut all = Vec::new();
    for claim in claims {
        all.extend(claim.await.expect("claimer"));
    }
    all.sort();
    assert_eq!(all, (0..6).map(|i| format!("c{i}")).collect::<Vec<_>>());
    store.close().await;
    other.close().await;
}

/// A key's jobs are listed newest first and only its own; a removed job takes its games and results with it;
/// the sweep removes the jobs over before a time and never one still running.
async fn jobs_are_listed_by_key_and_removed_with_their_results(ctx: &Ctx) {
    let store = ctx.store(16).await;
    for (i, owner) in ["alice", "bob", "alice", "alice"].into_iter().enumerate() {
        let job = NewJob { owner: Some(owner.into()), ..small_job(&format!("j{i}")) };
        store.create_job(&job).await.expect("created");
        // Distinct creation times, so that the order is the one of creation.
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    }
    store.create_job(&small_job("anonymous")).await.expect("created");
    let ids = |jobs: Vec<JobRow>| jobs.into_iter().map(|j| j.id).collect::<Vec<_>>();
    assert_eq!(ids(store.jobs_of("alice", 10).await.expect("lists")), ["j3", "j2", "j0"]);
    assert_eq!(ids(store.jobs_of("alice", 2).await.expect("lists")), ["j3", "j2"]);
    assert_eq!(ids(store.jobs_of("bob", 10).await.expect("lists")), ["j1"]);
    assert!(store.jobs_of("carol", 10).await.expect("lists").is_empty());

    assert_eq!(store.put_job_position("j0", 0, 0, "r").await.ok(), Some(true));
    assert_eq!(store.delete_job("j0").await.ok(), Some(true));
    assert_eq!(store.delete_job("j0").await.ok(), Some(false));
    assert_eq!(store.job("j0").await.ok(), Some(None));
    assert!(store.job_games("j0").await.expect("games").is_empty());
    assert_eq!(store.job_position_count("j0").await.ok(), Some(0));
    // Its results went with it: a job made again under the same id starts empty.
    store.create_job(&small_job("j0")).await.expect("the id is free again");
    assert_eq!(store.job_position_count("j0").await.ok(), Some(0));

    // j1 done, j2 failed, j3 still running, the others queued: a sweep after all of them removes the two over.
    store.set_job_status("j1", &[JobStatus::Queued], JobStatus::Done, None).await.expect("status");
    store.set_job_status("j2", &[JobStatus::Queued], JobStatus::Failed, Some("why")).await.expect("status");
    store.set_job_status("j3", &[JobStatus::Queued], JobStatus::Running, None).await.expect("status");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_millis();
    let now = i64::try_from(now).expect("fits");
    assert_eq!(store.delete_jobs_over_before(now - 60_000).await.ok(), Some(0), "none is a minute old");
    assert_eq!(store.delete_jobs_over_before(now + 1_000).await.ok(), Some(2));
    for (id, left) in [("j1", false), ("j2", false), ("j3", true), ("j0", true), ("anonymous", true)] {
        assert_eq!(store.job(id).await.expect("reads").is_some(), left, "{id}");
    }
    store.close().await;
}

async fn keys_are_kept_by_digest_revoked_by_name_and_quotas_never_overdrawn(ctx: &Ctx) {
    let store = ctx.store(0).await;
    let key = NewKey { name: "alice".into(), hash: "ab".repeat(32), rate: 2.5, burst: 30, quota_positions: Some(100) };
    assert_eq!(store.create_key(&key).await.ok(), Some(true));
    // A name is taken once, even with another digest.
    let again = NewKey { hash: "cd".repeat(32), ..key.clone() };
    assert_eq!(store.create_key(&again).await.ok(), Some(false));
    let bob = NewKey { name: "bob".into(), hash: "ef".repeat(32), rate: 1.0, burst: 5, quota_positions: None };
    assert_eq!(store.create_key(&bob).await.ok(), Some(true));
    let found = store.key_by_hash(&"ab".repeat(32)).await.expect("reads").expect("found");
    assert_eq!((found.name.as_str(), found.rate, found.burst, found.quota_positions), ("alice", 2.5, 30, Some(100)));
    assert_eq!(found.revoked_ms, None);
    assert_eq!(store.key_by_hash(&"cd".repeat(32)).await.ok(), Some(None));
    let names: Vec<String> = store.keys().await.expect("lists").into_iter().map(|k| k.name).collect();
    assert_eq!(names, ["alice", "bob"]);

    // The quota: 60 + 40 fit, one more does not, and a refused charge changes nothing; a new day starts at 0.
    assert_eq!(store.charge_key_quota("alice", 20_000, 60, 100).await.ok(), Some((true, 60)));
    assert_eq!(store.charge_key_quota("alice", 20_000, 41, 100).await.ok(), Some((false, 60)));
    assert_eq!(store.charge_key_quota("alice", 20_000, 40, 100).await.ok(), Some((true, 100)));
    assert_eq!(store.charge_key_quota("alice", 20_000, 1, 100).await.ok(), Some((false, 100)));
    assert_eq!(store.charge_key_quota("alice", 20_001, 101, 100).await.ok(), Some((false, 0)));
    assert_eq!(store.charge_key_quota("alice", 20_001, 1, 100).await.ok(), Some((true, 1)));
    // Given back (a job charged, then not made): never below zero, and only that day's.
    store.refund_key_quota("alice", 20_000, 30).await.expect("refunds");
    assert_eq!(store.charge_key_quota("alice", 20_000, 30, 100).await.ok(), Some((true, 100)));
    store.refund_key_quota("alice", 20_001, 5).await.expect("refunds");
    assert_eq!(store.charge_key_quota("alice", 20_001, 100, 100).await.ok(), Some((true, 100)));
    store.refund_key_quota("nobody", 20_001, 5).await.expect("nothing to give back");

    assert_eq!(store.revoke_key("alice").await.ok(), Some(true));
    assert_eq!(store.revoke_key("alice").await.ok(), Some(false));
    assert_eq!(store.revoke_key("nobody").await.ok(), Some(false));
    let revoked = store.key_by_hash(&"ab".repeat(32)).await.expect("reads").expect("kept");
    assert!(revoked.revoked_ms.is_some());
    store.close().await;
}

use std::time::Duration;

use super::*;
use crate::pool::PoolConfig;
use crate::search::testgames::{Nim, TicTacToe};

async fn service(workers: usize) -> Analysis {
    let pool = Pool::new(PoolConfig { workers, queue: 8, hash_mb: 1, clock_workers: 0 });
    let store = Store::builder("sqlite::memory:").open().await.expect("in-memory store");
    Analysis::new(pool, store)
}

fn pile(text: &str) -> Nim {
    Nim::parse_position(text, None).expect("pile")
}

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_second_request_is_answered_from_the_cache() {
    let analysis = service(1).await;
    let first = analysis.analyse(Request::new(pile("9"), Limits::depth(8))).await.expect("answer");
    assert!(!first.cached);
    assert_eq!(first.result.bestmove.as_deref(), Some("1"));
    let again = analysis.analyse(Request::new(pile("9"), Limits::depth(6))).await.expect("answer");
    assert!(again.cached, "a shallower request is answered by the deeper result");
    assert_eq!(again.result, first.result);
    // Deeper than stored: searched again.
    let deeper = analysis.analyse(Request::new(pile("9"), Limits::depth(10))).await.expect("answer");
    assert!(!deeper.cached);
    assert_eq!(analysis.counters().searches.load(Ordering::Relaxed), 2);
    assert_eq!(analysis.counters().cache_hits.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn cache_modes_and_finished_games() {
    let analysis = service(1).await;
    let only = analysis.analyse(Request::new(pile("7"), Limits::depth(4)).cache(CacheMode::Only)).await;
    assert!(matches!(only, Err(AnalysisError::NotCached)));
    analysis.analyse(Request::new(pile("7"), Limits::depth(4))).await.expect("answer");
    let refreshed =
        analysis.analyse(Request::new(pile("7"), Limits::depth(4)).cache(CacheMode::Refresh)).await.expect("answer");
    assert!(!refreshed.cached);
    let cached =
        analysis.analyse(Request::new(pile("7"), Limits::depth(30)).cache(CacheMode::Only)).await.expect("answer");
    assert!(cached.cached, "`only` takes whatever is stored");
    // A finished game is answered at once, without a search.
    let before = analysis.counters().searches.load(Ordering::Relaxed);
    let over = analysis.analyse(Request::new(pile("0"), Limits::depth(4))).await.expect("answer");
    assert!(over.end.is_some());
    assert!(over.result.bestmove.is_none() && over.result.lines.is_empty());
    assert_eq!(analysis.counters().searches.load(Ordering::Relaxed), before);
}

#[tokio::test]
async fn a_cache_only_request_the_store_cannot_answer_is_an_outage_not_a_miss() {
    let pool = Pool::new(PoolConfig { workers: 1, queue: 8, hash_mb: 1, clock_workers: 0 });
    let store = Store::builder("sqlite::memory:").open().await.expect("in-memory store");
    let analysis = Analysis::new(pool, store.clone());
    store.close().await;
    let only = analysis.analyse(Request::new(pile("7"), Limits::depth(4)).cache(CacheMode::Only)).await;
    assert!(matches!(only, Err(AnalysisError::Store(_))), "{only:?}");
}

#[tokio::test]
async fn identical_requests_share_one_search() {
    let analysis = service(2).await;
    // A search long enough for the second request to find it running.
    let request = Request::new(pile("100001"), Limits::nodes(3_000_000));
    let Started::Running(mut a) = analysis.start(request.clone()).await.expect("a") else { panic!("not searched") };
    let Started::Running(mut b) = analysis.start(request).await.expect("b") else { panic!("not searched") };
    let (ra, rb) = tokio::time::timeout(WAIT, async { (a.answer().await, b.answer().await) }).await.expect("answers");
    assert_eq!(ra.expect("a").result, rb.expect("b").result);
    assert_eq!(analysis.counters().searches.load(Ordering::Relaxed), 1);
    assert_eq!(analysis.counters().shared.load(Ordering::Relaxed), 1);
    // More lines are a different question.
    let other = analysis.analyse(Request::new(pile("100001"), Limits::depth(3)).multipv(2)).await.expect("answer");
    assert!(!other.cached);
    assert_eq!(analysis.counters().searches.load(Ordering::Relaxed), 2);
}

#[tokio::test]
async fn a_listener_that_stops_a_shared_search_leaves_it_running_for_the_others() {
    let analysis = service(1).await;
    let request = Request::new(TicTacToe::start(), Limits::infinite());
    // Infinite searches are never shared: each is its own.
    assert!(request.flight_key().is_none());
    let request = Request::new(pile("100003"), Limits::nodes(50_000_000));
    let Started::Running(mut a) = analysis.start(request.clone()).await.expect("a") else { panic!("not searched") };
    let Started::Running(mut b) = analysis.start(request).await.expect("b") else { panic!("not searched") };
    // Wait until a line of a completed iteration was reported, then stop `a` only.
    tokio::time::timeout(WAIT, async {
        loop {
            match a.next().await.expect("progress") {
                Progress::Info(info) if !info.pv.is_empty() && info.bound == ScoreBound::Exact => break,
                Progress::Info(_) => {}
                Progress::Done(_) => panic!("finished before it was stopped"),
            }
        }
    })
    .await
    .expect("a line");
    a.stop();
    let stopped = tokio::time::timeout(WAIT, a.answer()).await.expect("in time").expect("answer");
    assert!(stopped.result.bestmove.is_some() && stopped.result.depth > 0, "{stopped:?}");
    assert_eq!(analysis.pool().stats().busy, 1, "the search goes on for `b`");
    // `b`, now the only listener, stops the search itself and gets its answer.
    b.stop();
    let answer = tokio::time::timeout(WAIT, b.answer()).await.expect("in time").expect("answer");
    assert!(answer.result.bestmove.is_some());
}

#[tokio::test]
async fn a_search_its_only_listener_stopped_takes_no_new_listener() {
    let analysis = service(2).await;
    let request = Request::new(pile("100005"), Limits::nodes(50_000_000));
    let Started::Running(mut a) = analysis.start(request.clone()).await.expect("a") else { panic!("not searched") };
    a.stop();
    // Asked again while the stopped search winds down: a search of its own, not the stopped one's short answer.
    let Started::Running(mut b) = analysis.start(request).await.expect("b") else { panic!("not searched") };
    assert_eq!(analysis.counters().shared.load(Ordering::Relaxed), 0);
    assert_eq!(analysis.counters().searches.load(Ordering::Relaxed), 2);
    tokio::time::timeout(WAIT, a.answer()).await.expect("in time").expect("a's answer");
    b.stop();
    tokio::time::timeout(WAIT, b.answer()).await.expect("in time").expect("b's answer");
}

#[tokio::test]
async fn the_last_listener_leaving_cancels_the_search() {
    let analysis = service(1).await;
    let Started::Running(a) =
        analysis.start(Request::new(pile("100005"), Limits::nodes(u64::MAX / 2))).await.expect("a")
    else {
        panic!("not searched")
    };
    let deadline = tokio::time::Instant::now() + WAIT;
    while analysis.pool().stats().busy == 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    drop(a);
    while analysis.pool().stats().busy > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(analysis.pool().stats().busy, 0);
    assert!(analysis.finish_writes(WAIT).await);
}

#[test]
fn results_write_each_move_in_its_own_position_and_answer_shallower_limits() {
    use crate::game::Score;
    use crate::search::Line;
    let root = TicTacToe::start();
    let done: Done<u8> = Done {
        best: Some(4),
        ponder: Some(0),
        lines: vec![Line { pv: vec![4, 0], score: Score::Mate(3), depth: 9, seldepth: 12 }],
        depth: 9,
        seldepth: 12,
        nodes: 500,
        nps: 1000,
        time_ms: 500,
        neval: 400,
        game_end: None,
    };
    let cached = result_of(&root, &done);
    assert_eq!(cached.bestmove, Some(root.format_move(4)));
    let mut after = root.clone();
    after.make(4);
    assert_eq!(cached.lines[0].moves, vec![root.format_move(4), after.format_move(0)]);
    assert_eq!(cached.lines[0].score, crate::store::CachedScore::Mate(3));
    assert_eq!((cached.depth, cached.seldepth, cached.nodes, cached.time_ms), (9, 12, 500, 500));
    assert!(satisfies(&cached, &Limits::depth(9)));
    assert!(!satisfies(&cached, &Limits::depth(10)));
    assert!(satisfies(&cached, &Limits::nodes(500)));
    assert!(!satisfies(&cached, &Limits::movetime(Duration::from_millis(501))));
    assert!(!satisfies(&cached, &Limits::infinite()));
}

//! The entry point of a search: the shared state, the initial order of the root moves, the helper threads of
//! Lazy SMP next to the main thread (each a [`Searcher`] on the same table that reports nothing; the
//! odd-numbered ones start one ply deeper), and the final answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use super::params::{ROOT_ORDER_NOISY, ROOT_ORDER_TT_MOVE};
use super::root::{answer_lines, nps};
use super::searcher::{RootMove, Searcher, Shared, lmr_for};
use super::time::TimeBudget;
use super::tt::TranspositionTable;
use super::{Done, Event, Limits, MAX_MULTIPV, SearchOptions};
use crate::game::Game;

pub(super) fn run<G: Game>(
    game: &G,
    limits: &Limits,
    options: &SearchOptions,
    tt: &Arc<TranspositionTable>,
    stop: &Arc<AtomicBool>,
    sink: &mut dyn FnMut(Event<G::Move>),
) -> Done<G::Move> {
    let start = Instant::now();
    tt.new_search();
    let tuning = options.tuning.unwrap_or(G::SEARCH_TUNING);
    let shared = Shared {
        tt,
        stop,
        finished: AtomicBool::new(false),
        nodes: AtomicU64::new(0),
        neval: AtomicU64::new(0),
        budget: TimeBudget::new(limits, start),
        node_limit: if limits.infinite { None } else { limits.nodes },
        tuning,
        lmr: lmr_for(&tuning),
    };
    let game_end = game.rule_end(0);

    let mut main = Searcher::new(game, &shared, true);
    let mut moves = Vec::new();
    main.game.generate_moves(&mut moves);
    if !options.excluded.is_empty() && moves.iter().any(|&m| !options.excluded.contains(&G::move_key(m))) {
        moves.retain(|&m| !options.excluded.contains(&G::move_key(m)));
    }
    if moves.is_empty() {
        return Done {
            best: None,
            ponder: None,
            lines: Vec::new(),
            depth: 0,
            seldepth: 0,
            nodes: 0,
            nps: 0,
            time_ms: start.elapsed().as_millis() as u64,
            neval: 0,
            game_end: Some(game_end.unwrap_or_else(|| game.no_move_end())),
        };
    }
    // Initial order: the table's move, then noisy moves by their hint, then the rest as generated.
    let tt_key = tt.probe(game.hash()).map(|e| e.move_key).filter(|&k| k != 0);
    let mut keyed: Vec<(i64, G::Move)> = moves
        .iter()
        .map(|&m| {
            let k = if Some(G::move_key(m)) == tt_key {
                ROOT_ORDER_TT_MOVE
            } else if game.is_noisy(m) {
                ROOT_ORDER_NOISY | game.noisy_order(m) as i64
            } else {
                0
            };
            (k, m)
        })
        .collect();
    keyed.sort_by_key(|k| std::cmp::Reverse(k.0));
    let root: Vec<RootMove<G::Move>> = keyed.into_iter().map(|(_, m)| RootMove::new(m)).collect();
    main.root = root;

    let threads = options.threads.max(1);
    let completed = std::thread::scope(|scope| {
        let mut helpers = Vec::with_capacity(threads - 1);
        for t in 1..threads {
            let shared = &shared;
            let root_moves: Vec<G::Move> = main.root.iter().map(|r| r.m).collect();
            let helper_limits = Limits { infinite: true, ..limits.clone() };
            let helper_options = SearchOptions { multipv: 1, ..options.clone() };
            let spawned = std::thread::Builder::new().name(format!("kibitz-smp-{t}")).spawn_scoped(scope, move || {
                let mut helper = Searcher::new(game, shared, false);
                helper.root = root_moves.into_iter().map(RootMove::new).collect();
                let mut ignore = |_: Event<G::Move>| {};
                helper.iterate(&helper_limits, &helper_options, (t as u32) & 1, &mut ignore);
                shared.nodes.fetch_add(helper.pending_nodes, Ordering::Relaxed);
                shared.neval.fetch_add(helper.pending_neval, Ordering::Relaxed);
            });
            if let Ok(helper) = spawned {
                helpers.push(helper);
            }
        }
        let completed = main.iterate(limits, options, 0, sink);
        shared.finished.store(true, Ordering::Relaxed);
        // Joined, not only waited for by the scope: a helper has then ended as a thread too (its thread-local
        // state freed), so nothing of a search outlives it. A helper's panic goes on as the search's, as the
        // scope would have raised it.
        for helper in helpers {
            if let Err(panic) = helper.join() {
                std::panic::resume_unwind(panic);
            }
        }
        completed
    });
    shared.nodes.fetch_add(main.pending_nodes, Ordering::Relaxed);
    shared.neval.fetch_add(main.pending_neval, Ordering::Relaxed);
    main.pending_nodes = 0;
    main.pending_neval = 0;

    let multipv = options.multipv.clamp(1, MAX_MULTIPV).min(main.root.len());
    let lines = answer_lines(&main.root, multipv, completed, main.lines_finished, &main.last_lines);
    let best = lines.first().and_then(|l| l.pv.first()).copied().unwrap_or(main.root[0].m);
    let ponder = lines.first().and_then(|l| l.pv.get(1)).copied();
    let elapsed = start.elapsed();
    let nodes = shared.nodes.load(Ordering::Relaxed);
    Done {
        best: Some(best),
        ponder,
        seldepth: lines.first().map_or(0, |l| l.seldepth),
        lines,
        depth: completed,
        nodes,
        nps: nps(nodes, elapsed),
        time_ms: elapsed.as_millis() as u64,
        neval: shared.neval.load(Ordering::Relaxed),
        game_end,
    }
}

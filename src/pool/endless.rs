//! Endless searches share the workers.
//!
//! An endless search (an analysis that runs until its client stops it: GUIDE's infinite analysis, a WebSocket
//! `infinite`) would hold its worker for as long as the client likes; with every worker so held, every other
//! client's search waited until its own timeout. So an endless search runs in slices: when a search waits and
//! no worker is free, the pool's slicer asks the endless search that has run longest to yield, once it has
//! run [`MIN_SLICE`] (for a search that ends, waiting at the endless one's priority or any above batch work)
//! or [`ENDLESS_SLICE`] (for batch work waiting behind a person's analysis, or another endless search). It
//! stops, its answer is kept rather than sent, and it goes back to the queue at [`Priority::Low`], at the end
//! of its client's line: what waits runs first, and it goes on when a worker is free again. Its client sees a
//! pause, not a restart: the lines of a resumed run are sent only from the depth the client had already seen
//! (the shared transposition table brings the run there fast), nodes and time count on from the earlier runs,
//! and the final answer is the deepest of all runs'.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{JobState, Priority, Queues, Ran, lock};
use crate::game::Game;
use crate::search::{self, Done, Event, Limits, SearchOptions, TranspositionTable};

/// The least an endless search runs before a waiting search that ends may take its worker.
pub(super) const MIN_SLICE: Duration = Duration::from_secs(1);
/// The least an endless search runs before another endless search, or batch work below its priority, may take
/// its turn.
pub(super) const ENDLESS_SLICE: Duration = Duration::from_secs(10);

/// How long endless searches run before they yield: [`MIN_SLICE`] and [`ENDLESS_SLICE`] (tests set others).
#[derive(Clone, Copy, Debug)]
pub(super) struct Slices {
    /// Before a search that ends takes the worker.
    pub short: Duration,
    /// Before another endless search, or batch work below the endless one's priority, does.
    pub long: Duration,
}

impl Default for Slices {
    fn default() -> Self {
        Slices { short: MIN_SLICE, long: ENDLESS_SLICE }
    }
}

/// How often the slicer looks while endless searches run and searches wait.
pub(super) const TICK: Duration = Duration::from_millis(100);

/// What an endless search's earlier runs leave for the next.
struct Carried<M> {
    nodes: u64,
    time_ms: u64,
    neval: u64,
    /// The deepest line depth its client has been sent.
    shown: u32,
    /// The deepest answer of the runs so far.
    best: Option<Done<M>>,
}

/// The work of an endless search, run once per slice until it ends: each run reports whether it yielded.
pub(super) fn resumable<G: Game>(
    game: G,
    limits: Limits,
    options: SearchOptions,
    state: Arc<JobState>,
    mut sink: impl FnMut(Event<G::Move>) + Send + 'static,
) -> super::Work {
    let mut carried = Carried::<G::Move> { nodes: 0, time_ms: 0, neval: 0, shown: 0, best: None };
    Box::new(move |tt: &Arc<TranspositionTable>| {
        // A new run: a yield asked of the last run is spent; a stop the client asked meanwhile still holds.
        state.paused.store(false, Ordering::SeqCst);
        state.preempt.store(false, Ordering::SeqCst);
        state.stop.store(false, Ordering::SeqCst);
        // (Read after the reset: a stop or a shutdown that came in between is kept.)
        if state.is_stopping() {
            state.stop.store(true, Ordering::SeqCst);
            if let Some(mut best) = carried.best.take() {
                // Stopped while it waited for its next slice: the answer it had is the answer, with the
                // nodes and time of all its runs.
                best.nodes = carried.nodes;
                best.time_ms = carried.time_ms;
                best.neval = carried.neval;
                best.nps = nps(carried.nodes, carried.time_ms);
                sink(Event::Done(best));
                return Ran { nodes: 0, yielded: false };
            }
        }
        let (nodes_before, time_before, neval_before) = (carried.nodes, carried.time_ms, carried.neval);
        let resumed = carried.best.is_some();
        let mut shown = carried.shown;
        let done = {
            let mut forward = |event: Event<G::Move>| {
                if let Event::Info(mut info) = event {
                    if resumed && info.depth < shown {
                        return;
                    }
                    shown = shown.max(info.depth);
                    info.nodes += nodes_before;
                    info.time_ms += time_before;
                    info.neval += neval_before;
                    info.nps = nps(info.nodes, info.time_ms);
                    sink(Event::Info(info));
                }
                // The run's `Done` is sent below, once it is known whether the run yielded.
            };
            search::search(&game, &limits, &options, tt, &state.stop, &mut forward)
        };
        carried.shown = shown;
        let run_nodes = done.nodes;
        carried.nodes += done.nodes;
        carried.time_ms += done.time_ms;
        carried.neval += done.neval;
        let deeper = match carried.best.take() {
            Some(best) if best.depth > done.depth => best,
            _ => done,
        };
        let yielded = state.preempt.load(Ordering::SeqCst)
            && !state.asked.load(Ordering::SeqCst)
            && !state.cancelled.load(Ordering::SeqCst)
            && deeper.best.is_some();
        if yielded {
            carried.best = Some(deeper);
        } else {
            let mut answer = deeper;
            answer.nodes = carried.nodes;
            answer.time_ms = carried.time_ms;
            answer.neval = carried.neval;
            answer.nps = nps(carried.nodes, carried.time_ms);
            sink(Event::Done(answer));
        }
        Ran { nodes: run_nodes, yielded }
    })
}

fn nps(nodes: u64, time_ms: u64) -> u64 {
    nodes.saturating_mul(1000) / time_ms.max(1)
}

/// A running job the slicer may ask to yield.
pub(super) struct Slice {
    pub state: Arc<JobState>,
    pub started: Instant,
}

/// The slicer's one look: asks one endless search to yield when a search waits that no free worker will take
/// and it has had its slice. Returns whether the slicer should look again soon (endless searches run while
/// searches wait).
pub(super) fn look(
    queues: &Queues,
    running: &[Slice],
    idle: usize,
    clock_workers: bool,
    now: Instant,
    slices: Slices,
) -> bool {
    // What waits for a worker: the highest priority of a search that ends, and whether anything does.
    let mut finite: Option<Priority> = None;
    let mut waiting = 0;
    for (priority, fair) in queues.by_priority.iter().enumerate() {
        let priority = priority_of(priority);
        for job in fair.lines.iter().flat_map(|(_, line)| line) {
            // Cancelled jobs are only skipped; a clock worker takes the game moves.
            if job.state.cancelled.load(Ordering::Relaxed) || (clock_workers && job.clock) {
                continue;
            }
            waiting += 1;
            if !job.state.endless {
                finite = finite.max(Some(priority));
            }
        }
    }
    let endless_running = running.iter().any(|s| s.state.endless);
    if waiting == 0 || !endless_running {
        return false;
    }
    // Yields asked and not yet done will free workers for as many waiting searches.
    let yielding = running.iter().filter(|s| s.state.preempt.load(Ordering::Relaxed)).count();
    if waiting <= idle + yielding {
        return true;
    }
    let due = |s: &Slice| {
        let ran = now.saturating_duration_since(s.started);
        // Batch work below the endless search's priority gets its turn, but only now and then.
        let soon = finite.is_some_and(|p| p >= s.state.priority || p > Priority::Low);
        ran >= if soon { slices.short } else { slices.long }
    };
    let candidate = running
        .iter()
        .filter(|s| s.state.endless && !s.state.preempt.load(Ordering::Relaxed))
        .filter(|s| !s.state.asked.load(Ordering::Relaxed) && !s.state.cancelled.load(Ordering::Relaxed))
        .filter(|s| due(s))
        .min_by_key(|s| s.started);
    if let Some(slice) = candidate {
        slice.state.preempt.store(true, Ordering::SeqCst);
        slice.state.stop.store(true, Ordering::SeqCst);
    }
    true
}

fn priority_of(index: usize) -> Priority {
    match index {
        0 => Priority::Low,
        1 => Priority::Normal,
        2 => Priority::High,
        _ => Priority::Play,
    }
}

/// The slicer thread's loop: it sleeps until told a search is queued or an endless one started, then looks
/// every [`TICK`] for as long as endless searches run while searches wait, or paused ones wait (to answer
/// those whose clients stop them).
pub(super) fn slicer(inner: &super::Inner) {
    let mut queues = lock(&inner.queues);
    loop {
        if queues.shutdown {
            return;
        }
        // A paused search its client stopped answers now, with what it had, on this thread: it needs no worker
        // (it would otherwise wait for one, up to a slice of another endless search).
        let stopped: Vec<super::Queued> = queues
            .by_priority
            .iter_mut()
            .flat_map(|fair| fair.take_where(|q| q.state.paused.load(Ordering::SeqCst) && q.state.is_stopping()))
            .collect();
        if !stopped.is_empty() {
            drop(queues);
            let tt = Arc::clone(&inner.tt.read().unwrap_or_else(|e| e.into_inner()));
            for mut job in stopped {
                if !job.state.cancelled.load(Ordering::SeqCst) {
                    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (job.work)(&tt)));
                    if ran.is_err() {
                        tracing::error!("a paused search panicked as it answered");
                    }
                }
                inner.completed.fetch_add(1, Ordering::Relaxed);
                job.state.finish();
            }
            queues = lock(&inner.queues);
            continue;
        }
        let sliced = {
            let running = lock(&inner.running);
            let idle = inner.workers.saturating_sub(inner.busy.load(Ordering::Relaxed));
            look(&queues, &running, idle, inner.clock_workers > 0, Instant::now(), inner.slices)
        };
        let paused = queues
            .by_priority
            .iter()
            .flat_map(|fair| fair.lines.iter().flat_map(|(_, line)| line))
            .any(|q| q.state.paused.load(Ordering::SeqCst));
        let again = sliced || paused;
        queues = if again {
            match inner.slicer_wake.wait_timeout(queues, TICK) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            }
        } else {
            match inner.slicer_wake.wait(queues) {
                Ok(g) => g,
                Err(e) => e.into_inner(),
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    use super::super::{JobState, Priority, Queued, Queues, Ran};
    use super::{ENDLESS_SLICE, MIN_SLICE, Slice, Slices, look};

    fn job(priority: Priority, endless: bool) -> Arc<JobState> {
        Arc::new(JobState { priority, endless, ..JobState::default() })
    }

    fn queues(waiting: &[(Priority, bool, bool)]) -> Queues {
        let mut queues = Queues::default();
        for &(priority, endless, clock) in waiting {
            let state = job(priority, endless);
            let work: super::super::Work = Box::new(|_| Ran { nodes: 0, yielded: false });
            queues.by_priority[priority as usize].push(None, Queued { work, state, clock, client: None });
        }
        queues
    }

    fn running(now: Instant, slices: &[(Priority, bool, Duration)]) -> Vec<Slice> {
        slices.iter().map(|&(p, endless, ran)| Slice { state: job(p, endless), started: now - ran }).collect()
    }

    fn preempted(running: &[Slice]) -> Vec<bool> {
        running.iter().map(|s| s.state.preempt.load(Ordering::SeqCst)).collect()
    }

    const NORMAL: Priority = Priority::Normal;
    const SEC: Duration = Duration::from_secs(1);

    #[test]
    fn a_search_that_ends_takes_the_worker_of_the_longest_endless_one_after_its_slice() {
        let now = Instant::now();
        let waiting = queues(&[(NORMAL, false, false)]);
        let young = running(now, &[(NORMAL, true, MIN_SLICE / 2)]);
        assert!(look(&waiting, &young, 0, false, now, Slices::default()), "looks again");
        assert_eq!(preempted(&young), [false], "not before its slice");
        let two = running(now, &[(NORMAL, true, 2 * SEC), (NORMAL, true, 3 * SEC), (NORMAL, false, 9 * SEC)]);
        assert!(look(&waiting, &two, 0, false, now, Slices::default()));
        assert_eq!(preempted(&two), [false, true, false], "the one that ran longest, never one that ends");
        assert!(two[1].state.stop.load(Ordering::SeqCst), "its search is told to stop");
        assert!(!two[1].state.asked.load(Ordering::SeqCst), "as a yield, not the client's stop");
        // The yield asked frees a worker for the one search waiting: no second one.
        assert!(look(&waiting, &two, 0, false, now, Slices::default()));
        assert_eq!(preempted(&two), [false, true, false]);
    }

    #[test]
    fn endless_searches_take_turns_in_longer_slices() {
        let now = Instant::now();
        let waiting = queues(&[(NORMAL, true, false)]);
        let slices = running(now, &[(NORMAL, true, ENDLESS_SLICE - SEC)]);
        look(&waiting, &slices, 0, false, now, Slices::default());
        assert_eq!(preempted(&slices), [false]);
        let slices = running(now, &[(NORMAL, true, ENDLESS_SLICE + SEC)]);
        look(&waiting, &slices, 0, false, now, Slices::default());
        assert_eq!(preempted(&slices), [true]);
    }

    #[test]
    fn batch_work_behind_an_analysis_waits_the_longer_slice_other_searches_the_short_one() {
        let now = Instant::now();
        for (ran, yields) in [(ENDLESS_SLICE - SEC, false), (ENDLESS_SLICE + SEC, true)] {
            let slices = running(now, &[(Priority::High, true, ran)]);
            look(
                &queues(&[(Priority::Low, false, false), (NORMAL, true, false)]),
                &slices,
                0,
                false,
                now,
                Slices::default(),
            );
            assert_eq!(preempted(&slices), [yields], "batch work, after {ran:?}");
        }
        // A web app's analysis (Normal) behind a socket's endless one (High): it ends, so it goes soon.
        let slices = running(now, &[(Priority::High, true, MIN_SLICE + SEC)]);
        look(&queues(&[(NORMAL, false, false)]), &slices, 0, false, now, Slices::default());
        assert_eq!(preempted(&slices), [true]);
        // Batch work behind batch work's endless search is work of the same kind.
        let slices = running(now, &[(Priority::Low, true, MIN_SLICE + SEC)]);
        look(&queues(&[(Priority::Low, false, false)]), &slices, 0, false, now, Slices::default());
        assert_eq!(preempted(&slices), [true]);
    }

    #[test]
    fn nothing_yields_to_a_free_worker_a_cancelled_search_or_a_clock_workers_move() {
        let now = Instant::now();
        let slices = running(now, &[(NORMAL, true, 60 * SEC)]);
        look(&queues(&[(NORMAL, false, false)]), &slices, 1, false, now, Slices::default());
        assert_eq!(preempted(&slices), [false], "a worker is free");
        let gone = queues(&[(NORMAL, false, false)]);
        gone.by_priority[NORMAL as usize].lines[0].1[0].state.cancelled.store(true, Ordering::SeqCst);
        assert!(!look(&gone, &slices, 0, false, now, Slices::default()), "nothing waits: the slicer may sleep");
        assert_eq!(preempted(&slices), [false], "cancelled");
        look(&queues(&[(Priority::Play, false, true)]), &slices, 0, true, now, Slices::default());
        assert_eq!(preempted(&slices), [false], "a clock worker takes the game's move");
        look(&queues(&[(Priority::Play, false, true)]), &slices, 0, false, now, Slices::default());
        assert_eq!(preempted(&slices), [true], "without clock workers the move needs this worker");
        // A search its client stopped is ending anyway.
        let stopped = running(now, &[(NORMAL, true, 60 * SEC)]);
        stopped[0].state.ask_stop();
        look(&queues(&[(NORMAL, false, false)]), &stopped, 0, false, now, Slices::default());
        assert_eq!(preempted(&stopped), [false]);
        assert!(!look(&queues(&[]), &slices, 0, false, now, Slices::default()), "nothing waits");
        assert!(
            !look(&queues(&[(NORMAL, false, false)]), &running(now, &[]), 0, false, now, Slices::default()),
            "nothing endless"
        );
    }
}

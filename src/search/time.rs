//! Time management: how long one search may think.

use std::time::{Duration, Instant};

use super::Limits;

/// Kept back from every clock allocation for the protocol round trip and the process scheduler: this, or a
/// twentieth of the clock when that is more (a GUI's and the machine's delays grow with what they have to do,
/// and a loaded machine stalls a process for tens of milliseconds).
const OVERHEAD: Duration = Duration::from_millis(30);

/// A limit on a move's time that the answer must come within (the Checkers Protocol's and UHP's time
/// limits): what the search may take, so that the answer reaches the program in time. The search stops a few
/// milliseconds after its deadline and the answer takes its way out: a little is kept back (a quarter of a
/// very short limit, 5 ms and a fiftieth of a longer one).
pub fn answer_within(limit: Duration) -> Duration {
    let kept = (limit / 4).min(Duration::from_millis(5) + limit / 50);
    limit.saturating_sub(kept).max(Duration::from_millis(1))
}

/// The deadlines of one search.
#[derive(Clone, Copy, Debug)]
pub struct TimeBudget {
    pub start: Instant,
    /// Past this, start no new iteration (a clock search that would not finish the next one anyway).
    pub soft: Option<Duration>,
    /// Past this, stop at once.
    pub hard: Option<Duration>,
}

impl TimeBudget {
    pub fn new(limits: &Limits, start: Instant) -> Self {
        if limits.infinite {
            return TimeBudget { start, soft: None, hard: None };
        }
        let mut soft = None;
        let mut hard = limits.movetime;
        if let Some(clock) = limits.clock {
            let left = clock.remaining.saturating_sub(OVERHEAD.max(clock.remaining / 20));
            let moves = clock.moves_to_go.unwrap_or(30).clamp(1, 60);
            // A share of the remaining time plus most of the increment; never more than half of what is left
            // on a sudden-death clock, nor more than four fifths on the last move before a time control (found
            // by an audit: the whole clock less 30 ms was used there, a loss on time for any delay beyond).
            let share = left / moves + clock.increment * 3 / 4;
            let cap = if moves == 1 { left * 4 / 5 } else { left / 2 };
            let target = share.min(cap);
            let max = (target * 4).min(cap).max(target);
            soft = Some(target);
            hard = Some(match hard {
                Some(h) => h.min(max),
                None => max,
            });
        }
        TimeBudget { start, soft, hard }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Whether an iteration that just finished after `elapsed` should be followed by the next one. On a clock,
    /// only if it is likely to finish (each iteration costs a few times the one before): time not spent now is
    /// kept for later moves. A move time alone is the time this move has, and nothing is gained by leaving some
    /// of it: the next iteration starts, and the stop cuts it short (its root moves searched to the end count,
    /// a new best among them included).
    pub fn next_iteration_fits(&self, elapsed: Duration) -> bool {
        match self.soft {
            Some(soft) => elapsed < soft / 2,
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Clock;

    #[test]
    fn clock_allocation_stays_within_the_clock() {
        let limits = Limits {
            clock: Some(Clock {
                remaining: Duration::from_secs(60),
                increment: Duration::from_secs(1),
                moves_to_go: None,
            }),
            ..Limits::default()
        };
        let b = TimeBudget::new(&limits, Instant::now());
        let soft = b.soft.expect("soft");
        let hard = b.hard.expect("hard");
        assert!(soft >= Duration::from_secs(2) && soft <= Duration::from_secs(4), "{soft:?}");
        assert!(hard >= soft && hard <= Duration::from_secs(30), "{hard:?}");
    }

    #[test]
    fn last_move_before_control_may_use_the_clock() {
        let limits = Limits {
            clock: Some(Clock { remaining: Duration::from_secs(10), increment: Duration::ZERO, moves_to_go: Some(1) }),
            ..Limits::default()
        };
        let b = TimeBudget::new(&limits, Instant::now());
        assert!(b.hard.expect("hard") <= Duration::from_secs(8));
        assert!(b.soft.expect("soft") > Duration::from_secs(5));
        // A short clock keeps its margin too.
        let short = Limits {
            clock: Some(Clock { remaining: Duration::from_secs(1), increment: Duration::ZERO, moves_to_go: Some(1) }),
            ..Limits::default()
        };
        assert!(TimeBudget::new(&short, Instant::now()).hard.expect("hard") <= Duration::from_millis(800));
    }

    #[test]
    fn an_answer_within_a_limit_keeps_a_little_back() {
        assert_eq!(answer_within(Duration::from_secs(1)), Duration::from_millis(975));
        assert_eq!(answer_within(Duration::from_millis(20)), Duration::from_millis(15));
        assert_eq!(answer_within(Duration::from_millis(1)), Duration::from_millis(1));
        assert_eq!(answer_within(Duration::ZERO), Duration::from_millis(1));
        assert_eq!(answer_within(Duration::from_secs(60)), Duration::from_millis(58_795));
    }

    #[test]
    fn movetime_is_a_hard_limit_and_infinite_has_none() {
        let b = TimeBudget::new(&Limits::movetime(Duration::from_millis(500)), Instant::now());
        assert_eq!(b.hard, Some(Duration::from_millis(500)));
        // The whole move time is used: every iteration is followed by another until the stop.
        assert!(b.next_iteration_fits(Duration::from_millis(499)));
        let b = TimeBudget::new(&Limits::infinite(), Instant::now());
        assert!(b.hard.is_none() && b.soft.is_none());
        assert_eq!(Limits::movetime(Duration::from_millis(500)).time_limit(), Some(Duration::from_millis(500)));
        assert_eq!(Limits::infinite().time_limit(), None);
        assert_eq!(Limits::depth(3).time_limit(), None);
    }
}

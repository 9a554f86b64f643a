//! Time management: how long one search may think.

use std::time::{Duration, Instant};

use super::Limits;

/// Kept back from every clock allocation for the protocol round trip and the process scheduler.
const OVERHEAD: Duration = Duration::from_millis(30);

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
            let left = clock.remaining.saturating_sub(OVERHEAD);
            let moves = clock.moves_to_go.unwrap_or(30).clamp(1, 60);
            // A share of the remaining time plus most of the increment; never more than half of what is left
            // on a sudden-death clock (all of it, less the overhead, on the last move before a time control).
            let share = left / moves + clock.increment * 3 / 4;
            let cap = if moves == 1 { left } else { left / 2 };
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
        assert!(b.hard.expect("hard") <= Duration::from_secs(10));
        assert!(b.soft.expect("soft") > Duration::from_secs(5));
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

//! A search under the request timeout: stopped when the deadline comes, and answered with what it has (its
//! deepest completed iteration), never thrown away.

use std::time::{Duration, Instant};

use crate::analysis::{Analysis, AnalysisError, Answer, Request, Started, satisfies};
use crate::game::Game;

/// How long a stopped search has to answer, beyond the request timeout, before the request is answered 408.
/// A stop is seen within milliseconds; this covers a machine under load.
pub const ANSWER_GRACE: Duration = Duration::from_secs(5);

/// An answer, and whether the deadline stopped its search before the request's limit was reached.
pub(super) struct Timed {
    pub answer: Answer,
    pub stopped: bool,
}

/// The answer to `request`, its search stopped at `deadline` if it runs that long, or when the server begins to
/// stop (`shutdown`): either way marked `stopped` unless it had reached its limit (found by an audit: a search cut
/// by SIGTERM answered as if complete).
pub(super) async fn answer_by<G: Game>(
    analysis: &Analysis,
    request: Request<G>,
    deadline: Instant,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> Result<Timed, AnalysisError> {
    let limits = request.limits.clone();
    let mut subscription = match analysis.start(request).await? {
        Started::Answered(answer) => return Ok(Timed { answer, stopped: false }),
        Started::Running(subscription) => subscription,
    };
    tokio::select! {
        answer = subscription.answer() => return Ok(Timed { answer: answer?, stopped: false }),
        _ = tokio::time::sleep_until(deadline.into()) => {
            tracing::info!("the request timeout stops a search; answering with what it has");
        }
        Ok(_) = shutdown.wait_for(|stopping| *stopping) => {}
    }
    subscription.stop();
    let answer = subscription.answer().await?;
    // A search that reached its limit as the deadline came was not cut short.
    let stopped = !satisfies(&answer.result, &limits);
    Ok(Timed { answer, stopped })
}

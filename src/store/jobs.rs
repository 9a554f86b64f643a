//! Annotation jobs as the store keeps them: a job row, one row per game, one row per evaluated position.
//!
//! The store knows no game and no judgement: records, settings and results are opaque JSON text written by
//! the annotation module. What the store guarantees is durability and uniqueness: a job and all its games are
//! created in one transaction, each position's result is written once (a second write of the same position is
//! ignored), and status changes are conditional so that a cancelled job is never marked done.

use std::fmt;
use std::str::FromStr;

/// Where a job stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobStatus {
    /// Accepted, no position evaluated yet.
    Queued,
    /// Evaluating positions (also after a restart, until it finishes).
    Running,
    /// Every position evaluated.
    Done,
    /// Stopped by an error that retrying would not fix.
    Failed,
    /// Cancelled by a client.
    Cancelled,
}

impl JobStatus {
    pub const ALL: [JobStatus; 5] =
        [JobStatus::Queued, JobStatus::Running, JobStatus::Done, JobStatus::Failed, JobStatus::Cancelled];

    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Done => "done",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the job will not change any more.
    pub fn is_final(self) -> bool {
        matches!(self, JobStatus::Done | JobStatus::Failed | JobStatus::Cancelled)
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for JobStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        JobStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
            .ok_or_else(|| format!("unknown job status `{s}`"))
    }
}

/// A job to create.
#[derive(Clone, Debug)]
pub struct NewJob {
    pub id: String,
    pub game: String,
    /// The job's settings (limits, thresholds), JSON.
    pub settings: String,
    pub games: Vec<NewJobGame>,
    /// The API key (its name) that made the job; `None`: made without a key, readable by anyone with the id.
    pub owner: Option<String>,
}

/// One game of a job to create: a record to annotate, or the error that kept it from being read.
#[derive(Clone, Debug)]
pub struct NewJobGame {
    pub record: Option<String>,
    pub error: Option<String>,
    /// Positions to evaluate (0 for a game that could not be read).
    pub positions: u32,
}

/// A stored job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRow {
    pub id: String,
    pub game: String,
    pub status: JobStatus,
    pub settings: String,
    /// The engine version that created it.
    pub engine: String,
    pub error: Option<String>,
    pub created_ms: i64,
    pub updated_ms: i64,
    /// The API key (its name) that made the job, if any.
    pub owner: Option<String>,
    /// Why nobody runs the job, when a server that let it go said (PostgreSQL only; see
    /// [`crate::store::Store::release_job`]).
    pub waiting: Option<String>,
}

/// A stored game of a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobGameRow {
    pub idx: u32,
    pub record: Option<String>,
    pub error: Option<String>,
    pub positions: u32,
}

/// A stored position result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionRow {
    pub game_idx: u32,
    pub ply: u32,
    pub result: String,
}

/// The columns [`job_row`] reads (PostgreSQL's rows also have `waiting`).
pub(super) const JOB_COLUMNS: &str = "id, game, status, settings, engine, error, created_ms, updated_ms, key_name";

/// A job read from a row of `SELECT JOB_COLUMNS FROM annotation_jobs` (with `waiting` too when `waiting`), on
/// either backend; `what` names the job in the error of a corrupt row.
pub(super) fn job_row<R: sqlx::Row>(row: &R, what: &str, waiting: bool) -> Result<JobRow, super::StoreError>
where
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let corrupt = |e: String| super::StoreError::Corrupt { what: format!("annotation job {what}: {e}") };
    let status: String = row.try_get("status").map_err(|e| corrupt(e.to_string()))?;
    Ok(JobRow {
        id: row.try_get("id").map_err(|e| corrupt(e.to_string()))?,
        game: row.try_get("game").map_err(|e| corrupt(e.to_string()))?,
        status: status.parse::<JobStatus>().map_err(corrupt)?,
        settings: row.try_get("settings").map_err(|e| corrupt(e.to_string()))?,
        engine: row.try_get("engine").map_err(|e| corrupt(e.to_string()))?,
        error: row.try_get("error").map_err(|e| corrupt(e.to_string()))?,
        created_ms: row.try_get("created_ms").map_err(|e| corrupt(e.to_string()))?,
        updated_ms: row.try_get("updated_ms").map_err(|e| corrupt(e.to_string()))?,
        owner: row.try_get("key_name").map_err(|e| corrupt(e.to_string()))?,
        waiting: if waiting { row.try_get("waiting").map_err(|e| corrupt(e.to_string()))? } else { None },
    })
}

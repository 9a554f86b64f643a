//! The worker pool.

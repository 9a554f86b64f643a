//! The logging of every kibitz executable (`kibitz` and the protocol engines): `tracing` events to stderr,
//! filtered by the one variable [`ENV`] (`KIBITZ_LOG`, in tracing-subscriber's `EnvFilter` syntax, e.g.
//! `debug` or `kibitz::pool=trace,info`). Each executable has its own default level for when the variable is
//! unset or cannot be read.

use tracing_subscriber::EnvFilter;

/// The variable every executable reads its log filter from.
pub const ENV: &str = "KIBITZ_LOG";

/// The filter [`ENV`] gives, or `default` when it is unset or not a valid filter.
pub fn filter(default: &str) -> EnvFilter {
    EnvFilter::try_from_env(ENV).unwrap_or_else(|_| EnvFilter::new(default))
}

/// Log to stderr through [`filter`]`(default)`. Call once, first thing in `main`.
pub fn init(default: &str) {
    init_with(filter(default));
}

/// Log to stderr through `filter`. Call once, first thing in `main`.
pub fn init_with(filter: EnvFilter) {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(filter).init();
}

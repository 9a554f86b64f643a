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

/// Log to stderr through `filter`. Call once, first thing in `main`. Colours only on a terminal (and not
/// when `NO_COLOR` is set): a log written to a file or a pipe holds no escape codes.
pub fn init_with(filter: EnvFilter) {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(colours()).with_env_filter(filter).init();
}

/// Whether text log lines are coloured: stderr is a terminal and `NO_COLOR` is unset or empty
/// (<https://no-color.org>).
fn colours() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, with the fields of the event and of its spans (a request's `request_id`).
    Json,
}

/// Log to stderr through [`filter`]`(default)` in `format`. Call once, first thing in `main`.
pub fn init_as(default: &str, format: LogFormat) {
    match format {
        LogFormat::Text => init(default),
        LogFormat::Json => tracing_subscriber::fmt()
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .with_writer(std::io::stderr)
            .with_env_filter(filter(default))
            .init(),
    }
}

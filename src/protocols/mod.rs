//! Legacy engine protocols as transport-free state machines.
//!
//! Each protocol is a session fed with input lines and search events and producing output lines
//! ([`stdio::LineSession`]); [`stdio`] runs such a session on a pair of streams (stdin/stdout, or a socket:
//! [`guide::net`]).
//! [`ceboard`] is the exception: an engine called through a C ABI rather than lines.

pub mod ceboard;
pub mod checkers;
pub mod dxp;
pub mod engine;
pub mod guide;
pub mod hub;
pub mod proxy_header;
pub mod qianhong;
pub mod session;
pub mod stdio;
pub mod ucci;
pub mod uci;
pub mod uhp;
